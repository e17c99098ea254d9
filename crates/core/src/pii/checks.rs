//! Check digits of the formats whose shape alone would match ordinary numbers: what tells a card,
//! an IBAN or a national id from an order number.

/// The ASCII digits of `s`, in order.
fn digits(s: &str) -> Vec<u32> {
    s.chars().filter(char::is_ascii_digit).map(|c| c as u32 - '0' as u32).collect()
}

/// Luhn checksum over the digits of `s` (13 to 19 of them): what separates a card number from
/// any long number.
pub fn luhn_valid(s: &str) -> bool {
    let d = digits(s);
    if !(13..=19).contains(&d.len()) {
        return false;
    }
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| match i % 2 {
            1 if d * 2 > 9 => d * 2 - 9,
            1 => d * 2,
            _ => d,
        })
        .sum();
    sum % 10 == 0
}

/// ISO 13616 mod-97 over an IBAN written without separators (any case): 15 to 34 characters,
/// two letters, two check digits, then letters and digits.
pub(crate) fn iban_valid(s: &str) -> bool {
    let s = s.to_ascii_uppercase();
    let b = s.as_bytes();
    if !(15..=34).contains(&b.len())
        || !b[..2].iter().all(u8::is_ascii_uppercase)
        || !b[2..4].iter().all(u8::is_ascii_digit)
        || !b.iter().all(u8::is_ascii_alphanumeric)
    {
        return false;
    }
    let mut rem: u32 = 0;
    for &c in b[4..].iter().chain(&b[..4]) {
        let v = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            _ => u32::from(c - b'A') + 10,
        };
        rem = if v >= 10 { (rem * 100 + v) % 97 } else { (rem * 10 + v) % 97 };
    }
    rem == 1
}

/// A US SSN's area, group and serial as the SSA issues them (no 000, 666, 9xx; no zero parts).
pub(crate) fn ssn_valid(s: &str) -> bool {
    let d = digits(s);
    if d.len() != 9 {
        return false;
    }
    let area = d[0] * 100 + d[1] * 10 + d[2];
    let group = d[3] * 10 + d[4];
    let serial = d[5] * 1000 + d[6] * 100 + d[7] * 10 + d[8];
    area != 0 && area != 666 && area < 900 && group != 0 && serial != 0
}

/// Spanish DNI (8 digits and a letter) or NIE (X, Y or Z, 7 digits, a letter): the letter is
/// the number mod 23.
pub(crate) fn dni_valid(s: &str) -> bool {
    const LETTERS: &[u8] = b"TRWAGMYFPDXBNJZSQVHLCKE";
    let s: String = s.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_uppercase();
    let b = s.as_bytes();
    if b.len() != 9 {
        return false;
    }
    let lead = match b[0] {
        b'X' => 0,
        b'Y' => 1,
        b'Z' => 2,
        c if c.is_ascii_digit() => u64::from(c - b'0'),
        _ => return false,
    };
    if !b[1..8].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let n = b[1..8].iter().fold(lead, |n, &c| n * 10 + u64::from(c - b'0'));
    b[8] == LETTERS[(n % 23) as usize]
}

/// French NIR (numéro de sécurité sociale): 13 characters (Corsica's 2A and 2B read as 19 and
/// 18) and a key of 97 minus their value mod 97.
pub(crate) fn nir_valid(s: &str) -> bool {
    let s: String = s.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_uppercase();
    if s.len() != 15 {
        return false;
    }
    let body = s[..13].replace("2A", "19").replace("2B", "18");
    let (Ok(n), Ok(key)) = (body.parse::<u64>(), s[13..].parse::<u64>()) else {
        return false;
    };
    matches!(s.as_bytes()[0], b'1' | b'2') && key == 97 - n % 97
}

/// The check letter of a codice fiscale's first 15 characters (uppercase ASCII), from the odd
/// and even position tables of the decree.
pub(crate) fn codice_fiscale_letter(body: &[u8]) -> u8 {
    const ODD: [u32; 26] =
        [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];
    let index = |c: u8| if c.is_ascii_digit() { c - b'0' } else { c - b'A' } as usize;
    let sum: u32 =
        body.iter().enumerate().map(|(i, &c)| if i % 2 == 0 { ODD[index(c)] } else { index(c) as u32 }).sum();
    b'A' + (sum % 26) as u8
}

/// Italian codice fiscale: 15 characters and their check letter.
pub(crate) fn codice_fiscale_valid(s: &str) -> bool {
    let s = s.to_ascii_uppercase();
    let b = s.as_bytes();
    b.len() == 16 && b.iter().all(u8::is_ascii_alphanumeric) && b[15] == codice_fiscale_letter(&b[..15])
}

/// Dutch BSN: 9 digits passing the 11-check (weights 9..2, and -1 for the last).
pub(crate) fn bsn_valid(s: &str) -> bool {
    let d = digits(s);
    if d.len() != 9 || d[0] == 0 && d[1] == 0 {
        return false;
    }
    let sum: i64 = d[..8].iter().zip((2..=9).rev()).map(|(&d, w)| i64::from(d) * w).sum::<i64>() - i64::from(d[8]);
    sum % 11 == 0 && sum != 0
}

/// UK National Insurance number prefix: letters HMRC never issues (D, F, I, Q, U, V anywhere;
/// O second) and the reserved pairs.
pub(crate) fn nino_prefix_valid(s: &str) -> bool {
    let b: Vec<u8> = s.bytes().filter(u8::is_ascii_alphabetic).take(2).map(|c| c.to_ascii_uppercase()).collect();
    if b.len() != 2 {
        return false;
    }
    let never = |c: u8| b"DFIQUV".contains(&c);
    let pair = [b[0], b[1]];
    !never(b[0])
        && !never(b[1])
        && b[1] != b'O'
        && ![b"BG", b"GB", b"KN", b"NK", b"NT", b"TN", b"ZZ"].iter().any(|p| **p == pair)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn_accepts_test_cards_and_refuses_their_neighbours() {
        assert!(luhn_valid("4111 1111 1111 1111"));
        assert!(luhn_valid("378282246310005"));
        assert!(!luhn_valid("4111 1111 1111 1112"));
        assert!(!luhn_valid("4111"));
    }

    #[test]
    fn iban_mod_97() {
        assert!(iban_valid("DE89370400440532013000"));
        assert!(iban_valid("GB82WEST12345698765432"));
        assert!(iban_valid("fr1420041010050500013m02606"));
        assert!(!iban_valid("DE89370400440532013001"));
        assert!(!iban_valid("DE8937040044"));
    }

    #[test]
    fn national_ids_check_their_digits() {
        assert!(ssn_valid("123-45-6789"));
        assert!(!ssn_valid("666-45-6789"));
        assert!(!ssn_valid("000-12-3456"));
        assert!(!ssn_valid("900-12-3456"));
        assert!(dni_valid("12345678Z"));
        assert!(!dni_valid("12345678A"));
        assert!(dni_valid("X1234567L"));
        assert!(nir_valid("1 85 05 78 006 084 91"));
        assert!(!nir_valid("1 85 05 78 006 084 92"));
        assert!(codice_fiscale_valid("RSSMRA85T10A562S"));
        assert!(!codice_fiscale_valid("RSSMRA85T10A562T"));
        assert!(bsn_valid("111222333"));
        assert!(bsn_valid("1234.56.782"));
        assert!(!bsn_valid("123456789"));
        assert!(nino_prefix_valid("AB123456C"));
        assert!(!nino_prefix_valid("GB123456C"));
        assert!(!nino_prefix_valid("QQ123456C"));
    }
}
