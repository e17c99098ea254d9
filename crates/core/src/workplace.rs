//! A job said with its workplace, and what is left of it when the workplace changes.
//!
//! "I'm a mechanic at the First bus depot on Caledonia Road" is one memory, the job's slot. When
//! the user later starts somewhere else ("startin at the larkfield garage"), the employer slot
//! takes the new place and the job keeps only the trade ("User is a mechanic"), so the block
//! never says the user works at two places at once.

/// The job's text without the place it was said with; `None` when it names no place (nothing to
/// take back) or when the place it names is `new_place` (the job already says it).
pub fn without_workplace(job: &str, new_place: &str) -> Option<String> {
    let lower = job.to_lowercase();
    let at = place_starts(job)?;
    let trade = job[..at].trim_end();
    // "User is a" alone is no job; a trade of one word after the subject is ("User is a nurse").
    if trade.split_whitespace().count() < 3 {
        return None;
    }
    let place = lower[at..].trim_start().split_once(' ').map_or("", |(_, p)| p);
    let new = new_place.to_lowercase();
    if place.is_empty() || place.contains(new.trim_start_matches("the ")) {
        return None;
    }
    Some(trade.to_string())
}

/// Where the place a job was said with begins (" at the depot", " for the Guardian", " with
/// Kano State water board", " in one CBSE school").
fn place_starts(job: &str) -> Option<usize> {
    let lower = job.to_lowercase();
    [" at ", " for ", " with ", " in "].iter().filter_map(|p| lower.find(p)).min()
}

/// A job slot's value without its place ("mechanic at the first bus depot" → "mechanic").
pub fn trade(value: &str) -> &str {
    &value[..place_starts(value).unwrap_or(value.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_place_leaves_the_trade() {
        assert_eq!(
            without_workplace("User is a mechanic at the First bus depot on Caledonia Road", "the larkfield garage")
                .as_deref(),
            Some("User is a mechanic")
        );
        assert_eq!(
            without_workplace("User works as a writer for the Guardian", "the BBC").as_deref(),
            Some("User works as a writer")
        );
        // A learner's "with" and "in" name the place as well.
        assert_eq!(
            without_workplace("User is a civil engineer with Kano State water board", "a private construction company")
                .as_deref(),
            Some("User is a civil engineer")
        );
        assert_eq!(
            without_workplace("User is a maths teacher in one CBSE school in Velachery", "their Coimbatore branch")
                .as_deref(),
            Some("User is a maths teacher")
        );
    }

    #[test]
    fn a_job_with_no_place_or_the_same_place_is_left_alone() {
        assert_eq!(without_workplace("User is a nurse", "Aldi"), None);
        assert_eq!(without_workplace("User is a nurse at Aldi", "Aldi"), None);
        assert_eq!(without_workplace("User is at Aldi", "Lidl"), None);
        assert_eq!(trade("mechanic at the first bus depot"), "mechanic");
        assert_eq!(trade("nurse"), "nurse");
    }
}
