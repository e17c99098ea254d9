//! Medication: the medicines the user takes, one slot each (`medication:<medicine>`), so a new
//! dose replaces the old one instead of standing beside it.
//!
//! "I take warfarin 5mg every evening", "I'm on metformin 500 mg twice a day", "I drink
//! enalapril 10 mg in the morning" (as a learner says it), and later "so now enalapril 20 mg" or
//! "the doctor upped my sertraline to 100mg". What the user takes bears on what else is safe to
//! take, so it is a typed, sensitive profile fact; left to episodic capture it was a sentence
//! with no slot, and the old dose stayed current beside the new one.
//!
//! A word is read as a medicine when a dose follows it ("enalapril 20 mg"), when it is a
//! medicine named in `words/medicines.txt`, or when it ends as a family of medicines does
//! ("-pril", "-statin", "-olol"): "I'm on holiday", "I take the bus" and "I'm on nights" name
//! none.

use super::episodic::Words;
use super::lex::{phrase, third_person};
use super::rule::{Found, Mode, Rule, Sentence, cap};
use crate::kind::Kind;
use crate::memory::Sensitivity;
use crate::op::{Action, Draft, Target};
use crate::text::tidy;

/// A dose: an amount and its unit ("10 mg", "2.5mg", "100 micrograms", "2 puffs"), or the
/// amount alone as people say it of a medicine they name ("sertraline 50").
const DOSE: &str = r"(?P<dose>\d+(?:[.,]\d+)?(?:\s*(?:mg|mcg|µg|micrograms?|milligrams?|ml|units?|iu|puffs?))?\b(?:\s+(?:a|per)\s+day)?)";

/// A medicine's name as written: one word of four letters or more ("vitamin d" is two). A
/// release form after it ("adderall xr 10mg") is passed over: the slot is the medicine's.
/// What it is said to be, between commas after it ("lisinopril, the blood pressure pill, 10
/// milligrams"), is kept with it: a later "my blood pressure pill" names it that way.
const MEDICINE: &str = r"(?P<drug>vitamin\s+[a-z]\d*|[a-z][a-z-]{3,}(?:\s+(?:acid|sulphate|sulfate|fumarate|gluconate))?)(?:\s+(?:xr|xl|sr|er|cr|mr|odt|retard)\b)?(?P<what>,\s*(?:the|my)\s+[a-z][a-z\x20-]{2,30}?,)?";

/// When it is taken, said after it ("every evening", "twice a day", "in the morning").
const SCHEDULE: &str = r"(?P<form>\s+(?:(?:nasal|nose|eye|ear)\s+)?(?:inhaler|tablets?|pills?|capsules?|injections?|patch|spray|drops|puffer))?(?P<when>\s+(?:(?:once|twice|(?:one|two|three|four|[1-4])\s+times?)\s+(?:a\s+day|daily|per\s+day)|(?:every|each)\s+(?:morning|evening|night|day)|in\s+the\s+(?:morning|evening)|at\s+(?:night|bedtime)|morning\s+and\s+(?:night|evening)|daily|before\s+bed))?(?P<also>\s+and\s+(?P<drug2>[a-z][a-z-]{3,})\b)?";

/// What it is taken for or since, said after it ("for my heart", "after the valve operation",
/// "since march for anxiety"): kept with it, in the third person.
const WHY: &str = r"(?P<instead>\s+instead\s+of\s+(?:the\s+|my\s+)?(?P<replaced>[a-z][a-z-]{3,}))?(?P<why>\s+(?:for|after|since|because\s+of)\s+[^,.;!?]{2,60})?(?P<later>,\s*\d+(?:[.,]\d+)?\s*(?:mg|mcg|µg|micrograms?|milligrams?|ml|units?|iu|puffs?)\b)?(?P<advice>,\s*(?:and\s+|but\s+)?(?:the\s+|my\s+)?(?:doc|doctor|gp|dr|pharmacist|consultant|nurse)\s+(?:says?|said|told\s+me)\s+[^.;!?]{3,60})?";

/// Medicines named in `words/medicines.txt`, read on first use.
static LISTED: Words = Words::new(include_str!("words/medicines.txt"));

/// Endings that name a family of medicines ("lisinopril", "losartan", "bisoprolol").
const FAMILY_ENDINGS: &[&str] = &[
    "pril",
    "sartan",
    "olol",
    "statin",
    "dipine",
    "prazole",
    "cillin",
    "mycin",
    "cycline",
    "floxacin",
    "oxetine",
    "azepam",
    "azolam",
    "tidine",
    "formin",
    "gliptin",
    "gliflozin",
    "xaban",
    "parin",
    "codone",
    "triptan",
    "lukast",
    "olone",
    "thyroxine",
    "tretinoin",
    "mab",
    "zumab",
];

/// Salts named after a medicine ("ferrous sulphate"): the same words `MEDICINE` keeps with it.
const SALTS: &[&str] = &["sulphate", "sulfate", "fumarate", "gluconate"];

/// Whether `word` names a medicine, a dose said after it counting as proof.
pub(super) fn medicine(word: &str, dosed: bool) -> bool {
    let w = word.to_lowercase();
    // "ferrous sulphate": a salt named says a medicine (never listed alone: "ferrous" is
    // too near "furious" for the spelling fixes that read the list).
    if SALTS.iter().any(|salt| w.strip_suffix(salt).is_some_and(|n| n.ends_with(' '))) {
        return true;
    }
    // "alendronic acid", "folic acid": the first word names it.
    let w = w.strip_suffix(" acid").map_or(w.clone(), str::to_string);
    if w.starts_with("vitamin") {
        return true;
    }
    const NOT: &[&str] = &["the", "them", "this", "that", "these", "those", "some", "more", "less", "about", "only"];
    if NOT.contains(&w.as_str()) || crate::text::is_stopword(&w) {
        return false;
    }
    dosed || LISTED.has(&w) || FAMILY_ENDINGS.iter().any(|e| w.len() > e.len() + 2 && w.ends_with(e))
}

/// A rule of the family: its pattern with the medicine, dose, schedule and reason written in.
fn rule(name: &'static str, pattern: &str) -> Rule {
    let pattern = pattern
        .replace("<MEDICINE>", MEDICINE)
        .replace("<DOSE>", DOSE)
        .replace("<SCHEDULE>", SCHEDULE)
        .replace("<WHY>", WHY);
    Rule::new(name, Mode::Statement, &[], &pattern, takes)
}

/// The family's rules, one per way of saying it.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        // e.g. I take warfarin 5mg; I'm on metformin; I've been on levothyroxine for years;
        // 'I drink enalapril 10 mg' as a learner says it.
        rule(
            "medication.takes",
            r"(?x)
                (?:
                    \bi\s+<ADV>(?:(?:must|need\s+to|have\s+to|should|dey)\s+)?(?:take|drink|use|eat)
                    # 'an I on levothyroxine 75', the 'am' left out
                    | \bi\s+(?:now\s+|still\s+)?on
                    | \b<IM>\s+<ADV>(?:taking|on|now\s+on|still\s+on)
                    | \b<IVE>\s+<ADV>been\s+(?:taking|on)
                    # 'i am type 2 diabetic, on metformin 500 two times a day': the user's
                    # clause goes on with 'on', its subject left out
                    # (the words before the comma are left to the other rules: 'diabetic')
                    | (?P<elided>,)\s*(?:and\s+|n\s+)?(?:now\s+|still\s+)?on
                    # a fragment: 'on ramipril 5mg since march'
                    | ^(?:also\s+|and\s+|n\s+)?(?:now\s+|still\s+)?on
                )\s+(?:my\s+)?
                # what kind it is, then the name: 'taking TB medicine, rifampicin and isoniazid'
                (?:(?:[a-z]{2,}\s+)?(?:medicines?|medications?|meds|tablets|pills)\s*[,:-]\s*)?
                <MEDICINE>(?:\s+<DOSE>)?<SCHEDULE><WHY>
            ",
        ),
        // e.g. 'tamsulosin 400 for my waterworks', answering what the user takes: a fragment
        // opening on the medicine, its dose said.
        rule("medication.named-dose", r"^(?:my\s+)?<MEDICINE>\s+<DOSE><SCHEDULE><WHY>"),
        // e.g. so now enalapril 20 mg: a new dose said as a fragment; 'now is metformin 1000' as
        // a learner says it, 'now na losartan 50' in pidgin.
        rule(
            "medication.now-dose",
            r"(?:^|[,;:]\s*|\bso\s+)(?:now|so\s+now|now\s+on|and\s+now)\s+(?:(?:na|is|it's|its)\s+)?<MEDICINE>\s+<DOSE><SCHEDULE>",
        ),
        // e.g. the doctor upped my sertraline to 100mg; she put me on ramipril; 'doctor give me
        // amlodipine' as a learner says it.
        rule(
            "medication.changed",
            r"(?x)
                (?:
                    \b(?:(?:doctor|dr\.?|doc)(?:\s+[\p{L}'-]+)?|gp|gi|consultant|specialist|psychiatrist|surgeon|pharmacist|nurse|midwife|neuro|neurologist|cardiologist
                        |derm|dermatologist|rheumatologist|rheumy|gastro|hepatologist|endo|endocrinologist|oncologist|she|he|they|i)
                    (?:'s|'ve)?(?:\s+(?:here|there|now))?\s+(?:has\s+|have\s+)?
                    (?:upped|increased|raised|lowered|reduced|changed|added|halved|doubled|put\s+me\s+(?:on|onto)|(?:started|starts?)\s+me\s+on
                        |(?:switched|swapped|moved|changed|switch|change)\s+me\s+(?:to|onto|over\s+to)
                        # as learners say a new dose: doctor made pregabaline 150 at night
                        |made
                        |(?:got|has|have)\s+me\s+(?:on|onto)
                        # as learners say it: doctor increase my metformin
                        |increase|increases|raise|lower|reduce|change
                        |(?:give|gives|gave|given|prescribed|prescribes)\s+me)
                    # 'took me off the metoprolol, got me on diltiazem 120 now': the doctor of
                    # the clause before, left out
                    | (?:^|[,;]\s*)(?:now\s+|so\s+)?(?:got|put|started)\s+me\s+(?:on|onto)
                )\s+
                (?:my\s+|meh\s+|me\s+|the\s+)?<MEDICINE>
                # 'raised the Cipralex from 10 to 15': the old dose said before the new
                # 'halved the atorvastatin, i'm on 20 now'
                (?:(?:\s+(?:dose\s+)?(?:up\s+|down\s+)?(?:from\s+\d+(?:[.,]\d+)?\s*(?:mg|mcg)?\s+)?to|,?\s+(?:so\s+)?now|,?\s+(?:so\s+)?(?:i'm|i\s+am)\s+(?:now\s+)?(?:on|taking))?,?\s+<DOSE>)?<SCHEDULE><WHY>
            ",
        ),
        // e.g. doc bumped me up to 20mg on the adderall: the dose said before the medicine.
        rule(
            "medication.dose-on",
            r"(?x)
                \b(?:bumped|put|upped|moved|increased|dropped|lowered|knocked|brought)\s+me\s+(?:up\s+|down\s+)?to\s+
                <DOSE>\s+(?:of|on)\s+(?:the\s+|my\s+)?<MEDICINE><SCHEDULE>
            ",
        ),
        // e.g. the Dr has put my warfarin up to 6mg; the cardiologist took the furosemide down
        // to 20.
        rule(
            "medication.put-up",
            r"(?x)
                \b(?:(?:doctor|dr\.?|doc)(?:\s+[\p{L}'-]+)?|gp|consultant|specialist|nurse|cardiologist|psychiatrist|neurologist
                    |endo|endocrinologist|rheumatologist|she|he|they)\s+(?:has\s+|have\s+|'s\s+)?
                (?:put|took|taken|brought|knocked|cut)\s+(?:my\s+|the\s+)?<MEDICINE>\s+(?:dose\s+)?(?:up|down)\s+to\s+<DOSE><SCHEDULE>
            ",
        ),
        // e.g. my ramipril went up to 10mg.
        rule(
            "medication.my-dose",
            r"(?x)
                \bmy\s+<MEDICINE>\s+(?:dose\s+)?(?:is|went|was\s+changed|has\s+gone|got\s+changed)\s+
                (?:now\s+)?(?:up\s+|down\s+)?(?:to\s+)?<DOSE><SCHEDULE>
            ",
        ),
        // e.g. I cannot take chloroquine, my body will be scratching me: a medicine the user
        // must not be given, whatever the reason (the safety path's to raise).
        Rule::new(
            "medication.cannot-take",
            Mode::Statement,
            &["take", "have", "tolerate"],
            r"(?xi)
                # 'and cant have penicillin, i swells right up': the 'i' left out opening the
                # sentence
                (?:\bi\s+|^(?:and\s+|n\s+|also\s+|but\s+|oh\s+and\s+)?)(?:really\s+|just\s+)?
                (?:cannot|can't|cant|can\s+not|am\s+not\s+able\s+to|must\s+not|mustn't|shouldn't|should\s+not)
                \s+(?:take|have|tolerate)\s+(?:any\s+|the\s+)?(?P<drug>[a-z][a-z-]{3,})\b
                # 'the aspirin or the ibuprofen'
                (?P<tail>(?:\s+(?:or|and|n|nor)\s+(?:the\s+|any\s+)?(?P<drug2>[a-z][a-z-]{3,})\b)?
                (?P<why>[^.;!?]*))
            ",
            cannot_take,
        ),
        // e.g. no chloroquine for me o, e dey scratch me; no sulfa drugs for me, they give me a
        // rash: said as a refusal, a medicine the user must not be given all the same.
        Rule::new(
            "medication.not-for-me",
            Mode::Statement,
            &["for me"],
            r"(?xi)
                (?:^|[,;:]\s*|\band\s+|\bsay\s+|\bsaid\s+)no\s+(?:the\s+|any\s+)?(?P<drug>[a-z][a-z-]{3,})
                # 'no voltaren, no nurofen for me'
                (?:\s*(?:,|\bor\b|\band\b|\bn\b)\s*(?:no\s+)?(?P<drug2>[a-z][a-z-]{3,}))?
                (?:\s+(?:drugs?|tablets?|pills?|medicines?|injections?))?
                \s+for\s+me\b(?:\s+(?:o|oh|please|pls|ever|thanks))*
                (?P<tail>(?P<why>[^.;!?]*))
            ",
            cannot_take,
        ),
        // e.g. He stopped Cardiomagnyl; the doctor took me off the sertraline.
        Rule::new(
            "medication.stopped",
            Mode::Statement,
            &["stopped", "took me off", "taken me off", "discontinued", "working", "workin", "me off"],
            r"(?xi)
                (?:\b(?:(?:doctor|dr\.?|doc|gp|cardiologist|consultant|specialist|psychiatrist|nurse|midwife)|she|he|they|i)(?:'s|'ve)?\s+(?:has\s+|have\s+)?
                    # 'took me off the celebrex, …', 'stopped the ibuprofen': the subject left out
                    |^(?:so\s+|then\s+|and\s+)?)
                (?:stopped(?:\s+taking)?|discontinued|took\s+me\s+off|taken\s+me\s+off
                    # 'doc switched me off the zoloft, gained like 20 lbs'
                    |(?:switched|changed|moved|swapped)\s+me\s+off)\s+(?:my\s+|the\s+)?(?P<drug>[a-z][a-z-]{3,})\b
                # not 'took me off the allopurinol and put me on febuxostat', nor 'switched me
                # off the warfarin to apixaban': a switch, read as one ('stopped the nifedipine
                # for the summer' is no switch)
                (?P<switch>\s+(?:and|an|n|&)\s+(?:put|started|switched|changed)\b|\s+(?:to|onto)\s)?
                # e.g. humira stopped workin so my GI switched me to entyvio
                | (?:^|[,;]\s*)(?:(?:so|and|but|then|well)\s+)*(?:the\s+|my\s+)?(?P<failed>[a-z][a-z-]{3,})\s+(?:stopped|quit|isn't|wasn't|isnt|wasnt)\s+(?:working|workin)\b
            ",
            stopped,
        ),
        // e.g. the GP changed me from Sintrom to warfarin: the first is over, the second taken.
        Rule::new(
            "medication.switched",
            Mode::Statement,
            &["from", "off", "no ", "swapped", "switched", "changed"],
            r"(?xi)
                # e.g. The Doctor changed me off the Warfarin to a new one called Apixaban.
                \b(?:changed|switched|moved|swapped|took)\s+me\s+(?:from|off)\s+(?:my\s+|the\s+)?(?P<old>[a-z][a-z-]{3,})
                # doc took me off the allopurinol an put me on febuxostat
                \s+(?:to|onto|for|(?:and|an|n|&)\s+(?:put|started|switched|changed)\s+me\s+(?:on|onto|to))\s+(?:(?:a\s+)?new\s+(?:one|tablet|pill|drug|medicine)\s+called\s+|the\s+)?
                (?P<drug>[a-z][a-z-]{3,})
                # e.g. doctor change my medicine, no more omeprazole, now famotidine
                | \bno\s+(?:more\s+)?(?:the\s+)?(?P<old2>[a-z][a-z-]{3,})\s*(?:[,;]|\s+-)?\s*(?:now|just|only)\s+(?:the\s+)?(?P<drug2>[a-z][a-z-]{3,})
                # e.g. Doctor's swapped me edoxiban for apixaban, 5mg twice a day
                | \b(?:swapped|switched|changed)\s+(?:me\s+|my\s+)?(?:the\s+)?(?P<old3>[a-z][a-z-]{3,})\s+(?:for|to)\s+(?:the\s+)?(?P<drug3>[a-z][a-z-]{3,})
                  (?:,?\s+(?P<dose>\d+(?:[.,]\d+)?\s*(?:mg|mcg|micrograms?|milligrams?)\b))?
            ",
            switched,
        ),
    ]
}

/// A sensitive profile fact about what the user takes or must not take, in its slot: what
/// bears on what else is safe, so never shown beside unrelated requests.
fn medical(content: String, salience: f32, key: String, value: impl Into<String>) -> Draft {
    let mut d = Draft::new(Kind::Profile, content, 0.9, salience).keyed(key, value.into());
    d.sensitivity = Sensitivity::Sensitive;
    d
}

/// "He stopped Cardiomagnyl": the medicine's slot says it is over.
fn stopped(c: &regex::Captures<'_>, _: &Sentence<'_>) -> Vec<Found> {
    let Some(drug) = cap(c, "drug").or(cap(c, "failed")).map(str::to_lowercase) else { return Vec::new() };
    if !medicine(&drug, false) || c.name("switch").is_some() {
        return Vec::new();
    }
    let d = medical(format!("User no longer takes {drug}"), 0.7, format!("medication:{drug}"), "stopped");
    vec![Found::with(Action::Update(Target::Key(format!("medication:{drug}"))), d)]
}

/// "I cannot take chloroquine, my body will be scratching me seriously": the medicine and why,
/// kept as the user's own reason after it.
fn cannot_take(c: &regex::Captures<'_>, _: &Sentence<'_>) -> Vec<Found> {
    let Some(drug) = cap(c, "drug").map(str::to_lowercase) else { return Vec::new() };
    if !medicine(&drug, false) {
        return Vec::new();
    }
    // A second name that is no medicine ("aspirin or nothing like that") is part of the why.
    let second = cap(c, "drug2").map(str::to_lowercase).filter(|d| medicine(d, false));
    let why = if second.is_some() { cap(c, "why") } else { cap(c, "tail") };
    // "… or nothing like that, had a stomach bleed", "the Brufen and all, …": the words that
    // stand for more of the same say no reason.
    let mut why = why.map(|w| tidy(w.trim_start_matches([',', ' ', '-']))).unwrap_or_default();
    while let Some(rest) = [
        "or nothing like that",
        "or anything like that",
        "or anything like it",
        "or anything",
        "or owt",
        "and all",
        "n all",
        "and that",
        "and stuff",
        "etc",
    ]
    .iter()
    .find_map(|f| {
        // An ASCII filler matched in the lower case starts the text with the same bytes.
        let head = why.get(..f.len())?;
        head.eq_ignore_ascii_case(f).then(|| why[f.len()..].trim_start_matches([',', ' ', '.']).to_string())
    }) {
        why = rest;
    }
    let why = if why.is_empty() { String::new() } else { format!(": {}", third_person(&why)) };
    let mut found = Vec::new();
    for drug in std::iter::once(drug).chain(second) {
        let d = medical(format!("User cannot take {drug}{why}"), 0.9, format!("intolerance:{drug}"), "cannot take");
        found.push(Found::add(d));
    }
    found
}

/// "changed me from Sintrom to warfarin": the old medicine's slot says it was stopped, the new
/// one is taken.
fn switched(c: &regex::Captures<'_>, _: &Sentence<'_>) -> Vec<Found> {
    let (Some(old), Some(new)) =
        (cap(c, "old").or(cap(c, "old2")).or(cap(c, "old3")), cap(c, "drug").or(cap(c, "drug2")).or(cap(c, "drug3")))
    else {
        return Vec::new();
    };
    let (old, new) = (old.to_lowercase(), new.to_lowercase());
    if !medicine(&old, false) || !medicine(&new, false) {
        return Vec::new();
    }
    let stopped =
        medical(format!("User no longer takes {old} (switched to {new})"), 0.7, format!("medication:{old}"), "stopped");
    let dose = cap(c, "dose").map(spaced);
    let taken = match dose {
        Some(d) => medical(format!("User takes {new} {d}"), 0.85, format!("medication:{new}"), d),
        None => medical(format!("User takes {new}"), 0.85, format!("medication:{new}"), "taken"),
    };
    vec![Found::with(Action::Update(Target::Key(format!("medication:{old}"))), stopped), Found::add(taken)]
}

/// A dose as the slot keeps it, its unit spaced from the amount ("5mg" reads "5 mg").
fn spaced(dose: &str) -> String {
    let d = tidy(dose);
    let split = d.find(|ch: char| !(ch.is_ascii_digit() || ch == '.' || ch == ',')).unwrap_or(d.len());
    let (n, unit) = d.split_at(split);
    format!("{n} {}", unit.trim_start()).trim().to_string()
}

/// "User takes enalapril 20 mg in the morning", keyed by the medicine with its dose for a value:
/// a later dose replaces it. Without a dose it is keyed all the same ("taken"), so "I'm on
/// warfarin" said again reinforces rather than adds.
fn takes(c: &regex::Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    // After a comma, "on …" goes on the clause before it: the user's only when that clause has
    // the user for its subject ("im epileptic, on lamotrigine"; not "my dad is diabetic, on …").
    if let Some(comma) = c.name("elided") {
        let before = s.text[..comma.start()].to_lowercase();
        let clause = before.rsplit([',', ';']).next().unwrap_or_default();
        let first = clause.split_whitespace().next().unwrap_or_default();
        let own = clause.split_whitespace().any(|w| matches!(w, "i" | "i'm" | "im" | "i've" | "ive"));
        if !own || matches!(first, "my" | "our" | "he" | "she" | "they" | "his" | "her") {
            return Vec::new();
        }
    }
    let Some(drug) = cap(c, "drug").map(|d| tidy(&d.to_lowercase())) else { return Vec::new() };
    // "on methotrexate for my psoriasis, 15mg every Monday": the dose said after the reason.
    let dose = cap(c, "dose").or_else(|| cap(c, "later").map(|l| l.trim_start_matches([',', ' ']))).map(spaced);
    // A dose changed with no new dose in the pattern ("upped the sertraline so its 100 now not
    // 50") is the correction family's to read: a bare "takes" would lose the dose the slot has.
    let whole = c.get(0).map_or("", |m| m.as_str()).to_lowercase();
    // "Doctor made pregabaline 150": only with the dose does "made" say a new one.
    let change = ["upped", "increase", "raise", "lower", "reduce", "change", "made"].iter().any(|v| whole.contains(v));
    let moved_to = [" me to ", " me onto ", " me over to "].iter().any(|v| whole.contains(v));
    if change && !moved_to && dose.is_none() {
        return Vec::new();
    }
    // Only a unit makes an unknown word a medicine: "photos 3" is no dose.
    let unit = dose.as_deref().is_some_and(|d| d.contains(char::is_alphabetic));
    if !medicine(&drug, unit) {
        return Vec::new();
    }
    let when = cap(c, "when").and_then(phrase).map(|w| format!(" {}", tidy(&w)));
    let dose_text = dose.as_deref().map(|d| format!(" {d}")).unwrap_or_default();
    // "for migraines btw": the chat's own words end it; so does a clause with its own subject
    // ("since march for anxiety n i think i forgot it").
    let why = cap(c, "why")
        .map(|w| {
            let mut words: Vec<&str> = w.split_whitespace().collect();
            let clause = words.windows(2).position(|p| {
                matches!(p[0].to_lowercase().as_str(), "and" | "n" | "but" | "so" | "&")
                    && matches!(p[1].to_lowercase().as_str(), "i" | "i'm" | "i've" | "im" | "ive" | "we" | "my")
            });
            if let Some(at) = clause {
                words.truncate(at);
            }
            while words.last().is_some_and(|l| {
                matches!(l.to_lowercase().as_str(), "btw" | "lol" | "tho" | "though" | "too" | "haha" | "x")
            }) {
                words.pop();
            }
            format!(" {}", third_person(&words.join(" ")))
        })
        .unwrap_or_default();
    // What the doctor said of it goes with it ("…, the doc says no grapefruit juice").
    // The advice ends where a clause of the user's own begins ("…, which is a shame cos I love
    // it"): the pattern stops at a length, and a cut mid-clause would end on "cos they".
    let why = match cap(c, "advice").map(|a| a.trim_start_matches([',', ' '])) {
        Some(a) => {
            // Offsets found in the lower case index the text only where lowering kept every
            // letter's length ("İ" does not); otherwise the advice stays whole.
            let lower = a.to_lowercase();
            let end = (lower.len() == a.len())
                .then(|| {
                    [", which", ", but", ", so", " cos ", " coz ", " because ", " but "]
                        .iter()
                        .filter_map(|b| lower.find(b))
                        .min()
                })
                .flatten()
                .unwrap_or(a.len());
            format!("{why}; {}", third_person(&tidy(a[..end].trim_end_matches([',', ' ']))))
        }
        None => why,
    };
    // "Foracort inhaler two times daily": the form is part of what is taken.
    let form = cap(c, "form").map(|f| format!(" {}", tidy(&f.to_lowercase()))).unwrap_or_default();
    let what =
        cap(c, "what").map(|w| format!(" ({})", third_person(&tidy(w.trim_matches([',', ' ']))))).unwrap_or_default();
    let content = format!("User takes {drug}{what}{form}{dose_text}{}{why}", when.as_deref().unwrap_or(""));
    let d = medical(content, 0.85, format!("medication:{drug}"), dose.unwrap_or_else(|| "taken".to_string()));
    let mut found = vec![Found::add(d)];
    // "She gives me bisoprolol 2.5 instead of the Concor": the one it replaces is over.
    if let Some(old) = cap(c, "replaced").map(str::to_lowercase).filter(|o| medicine(o, false) && *o != drug) {
        let d = medical(
            format!("User no longer takes {old} (switched to {drug})"),
            0.7,
            format!("medication:{old}"),
            "stopped",
        );
        found.push(Found::with(Action::Update(Target::Key(format!("medication:{old}"))), d));
    }
    // "Cardiomagnyl every morning and Lorista": a second medicine named after the first.
    if let Some(other) = cap(c, "drug2").map(str::to_lowercase).filter(|o| medicine(o, false)) {
        found.push(Found::add(medical(format!("User takes {other}"), 0.85, format!("medication:{other}"), "taken")));
    }
    found
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::run;

    fn medication(text: &str) -> Option<(String, String, String)> {
        run(text)
            .into_iter()
            .find(|o| o.draft.rule.as_deref().is_some_and(|r| r.starts_with("medication.")))
            .map(|o| (o.draft.content, o.draft.key.unwrap_or_default(), o.draft.value.unwrap_or_default()))
    }

    #[test]
    fn a_medicine_with_its_dose_is_a_slot_of_its_own() {
        let (content, key, value) = medication("I take warfarin 5mg every evening.").unwrap();
        assert_eq!(
            (content.as_str(), key.as_str(), value.as_str()),
            ("User takes warfarin 5 mg every evening", "medication:warfarin", "5 mg")
        );
        let (content, _, value) = medication("i drink ramipril 2.5 mg in the morning").unwrap();
        assert_eq!((content.as_str(), value.as_str()), ("User takes ramipril 2.5 mg in the morning", "2.5 mg"));
        let (content, key, _) = medication("I'm on bisoprolol for my heart.").unwrap();
        assert_eq!(
            (content.as_str(), key.as_str()),
            ("User takes bisoprolol for their heart", "medication:bisoprolol")
        );
        let (content, _, _) = medication("i'm on sumatriptan 50mg for migraines btw").unwrap();
        assert_eq!(content, "User takes sumatriptan 50 mg for migraines");
        let (content, _, _) = medication("ive been on citalopram 20mg since june n i think its helping").unwrap();
        assert_eq!(content, "User takes citalopram 20 mg since june");
        let (content, _, _) = medication("I'm on atorvastatin 20mg, the GP says no grapefruit.").unwrap();
        assert_eq!(content, "User takes atorvastatin 20 mg; the GP says no grapefruit");
        let (content, _, value) =
            medication("my doctor give me sertraline 50 since the winter, for depression").unwrap();
        assert_eq!((content.as_str(), value.as_str()), ("User takes sertraline 50 since the winter", "50"));
        assert_eq!(medication("I take photos 3 days a week"), None);
        let (content, _, _) = medication("My doctor give me ramipril one tablet every morning.").unwrap();
        assert_eq!(content, "User takes ramipril");
        // A new dose as a learner or in pidgin says it.
        let (content, key, _) = medication("my gp change my BP med. now na losartan 50 every morning").unwrap();
        assert_eq!((content.as_str(), key.as_str()), ("User takes losartan 50 every morning", "medication:losartan"));
        let (content, _, _) = medication("The doctor was not happy. Now is metformin 1000 two times in day.").unwrap();
        assert!(content.starts_with("User takes metformin 1000"), "{content}");
        // "eat" as learners say "take"; a salt named after the medicine stays with it
        let (content, _, _) = medication("i dey take omeprazole 20 every morning").unwrap();
        assert!(content.starts_with("User takes omeprazole 20"), "{content}");
        let (content, _, _) = medication("I eat metformin 500 two times a day").unwrap();
        assert!(content.starts_with("User takes metformin 500"), "{content}");
        let (content, key, _) = medication("de doc got me on ferrous sulphate cause muh iron low").unwrap();
        assert_eq!((content.as_str(), key.as_str()), ("User takes ferrous sulphate", "medication:ferrous sulphate"));
    }

    #[test]
    fn a_new_dose_said_in_passing_is_read_for_the_same_slot() {
        let (content, key, value) =
            medication("The GP says my sugars are still high, so now gliclazide 80 mg twice a day.").unwrap();
        assert_eq!(content, "User takes gliclazide 80 mg twice a day");
        assert_eq!((key.as_str(), value.as_str()), ("medication:gliclazide", "80 mg"));
        let (_, key, value) = medication("Also I was by the doctor, he raised the Cipralex from 10 to 15.").unwrap();
        assert_eq!((key.as_str(), value.as_str()), ("medication:cipralex", "15"));
        let (_, key, value) = medication("My consultant upped my propranolol to 40mg last week.").unwrap();
        assert_eq!((key.as_str(), value.as_str()), ("medication:propranolol", "40 mg"));
        // A doctor by name, or the user, changing it.
        let (_, key, value) = medication("Dr. Nguyen upped my sertraline to 100mg last week").unwrap();
        assert_eq!((key.as_str(), value.as_str()), ("medication:sertraline", "100 mg"));
        let (_, key, value) = medication("I reduced my quetiapine to 25mg").unwrap();
        assert_eq!((key.as_str(), value.as_str()), ("medication:quetiapine", "25 mg"));
        let (_, key, value) = medication("my sertraline went up to 150 mg").unwrap();
        assert_eq!((key.as_str(), value.as_str()), ("medication:sertraline", "150 mg"));
        // As a learner says it, and put up to.
        let (_, key, value) = medication("Doctor increase my gliclazide, now 160 morning and night").unwrap();
        assert_eq!((key.as_str(), value.as_str()), ("medication:gliclazide", "160"));
        let (_, key, value) = medication("The Dr has put my Apixaban up to 5mg twice a day").unwrap();
        assert_eq!((key.as_str(), value.as_str()), ("medication:apixaban", "5 mg"));
        assert_eq!(medication("I put my insulin in the fridge"), None);
    }

    #[test]
    fn a_switch_said_with_capitals_and_a_new_one_called_is_read() {
        let got = crate::extract::heuristic::tests::contents(
            "The Doctor changed me off the Warfarin to a new one called Apixaban, twice a day now",
        );
        assert!(got.iter().any(|c| c == "User no longer takes warfarin (switched to apixaban)"), "{got:?}");
        assert!(got.iter().any(|c| c == "User takes apixaban"), "{got:?}");
    }

    #[test]
    fn a_switch_ends_one_medicine_and_starts_the_other() {
        let ops = run("The cardiologist switched me from bisoprolol to nebivolol last week.");
        let said: Vec<(String, Option<String>)> =
            ops.iter().map(|o| (o.draft.content.clone(), o.draft.value.clone())).collect();
        assert!(
            said.contains(&("User no longer takes bisoprolol (switched to nebivolol)".into(), Some("stopped".into()))),
            "{said:?}"
        );
        assert!(said.contains(&("User takes nebivolol".into(), Some("taken".into()))), "{said:?}");
    }

    #[test]
    fn a_change_said_by_a_specialist_or_as_a_swap_is_read_with_its_dose() {
        for (text, content, value) in [
            ("Derm upped the methotrexate to 20mg, still Mondays.", "User takes methotrexate 20 mg", "20 mg"),
            ("Doctor made pregabaline 150 at night, no morning dose.", "User takes pregabalin 150 at night", "150"),
            ("so hepatology doctor start me on tenofovir, one tablet every day", "User takes tenofovir", "taken"),
            ("my GI switched me to entyvio, its a infusion every 8 weeks", "User takes entyvio", "taken"),
            (
                "I'm on methotrexate for my psoriasis, 15mg every Monday",
                "User takes methotrexate 15 mg for their psoriasis",
                "15 mg",
            ),
            (
                "tamsolusin 400 for my waterworks, prostate a bit big",
                "User takes tamsulosin 400 for their waterworks",
                "400",
            ),
        ] {
            let (got, _, v) = medication(text).unwrap_or_default();
            assert_eq!((got.as_str(), v.as_str()), (content, value), "{text}");
        }
        let said = |text: &str| -> Vec<String> { run(text).into_iter().map(|o| o.draft.content).collect() };
        let swap = said("Doctor's swapped me edoxiban for apixaban, 5mg twice a day, summat about me kidneys");
        assert!(swap.contains(&"User takes apixaban 5 mg".to_string()), "{swap:?}");
        assert!(swap.contains(&"User no longer takes edoxaban (switched to apixaban)".to_string()), "{swap:?}");
        let instead = said("She gives me bisoprolol 2.5 instead of the Concor");
        assert!(instead.contains(&"User no longer takes concor (switched to bisoprolol)".to_string()), "{instead:?}");
        let failed = said("humira stopped workin so my GI switched me to entyvio");
        assert!(failed.contains(&"User no longer takes humira".to_string()), "{failed:?}");
        // A verb that names no change without a dose: "the doctor made me laugh".
        assert_eq!(medication("The doctor made me laugh so much"), None);
    }

    #[test]
    fn a_medicine_said_the_way_chat_says_it_is_read() {
        let contents = crate::extract::heuristic::tests::contents;
        // The doctor of the clause before, left out; a switch said in two clauses.
        let got = contents("doc took me off the metoprolol, got me on diltiazem 120mg now, heart was runnin too slow");
        assert!(got.iter().any(|c| c == "User no longer takes metoprolol"), "{got:?}");
        assert!(got.iter().any(|c| c.starts_with("User takes diltiazem 120 mg")), "{got:?}");
        let (content, _, _) = medication("doctor has added gliclazide 40mg in the morning").unwrap();
        assert_eq!(content, "User takes gliclazide 40 mg in the morning");
        // The user's clause goes on with "on", its subject left out; a misspelt name.
        let (content, key, _) = medication("also i am type 2 diabetic, on metformine 500 two times a day").unwrap();
        assert_eq!(
            (content.as_str(), key.as_str()),
            ("User takes metformin 500 two times a day", "medication:metformin")
        );
        // What kind it is before the names.
        let got = contents("And I am taking TB medicine, rifampicin and isoniazid, 3 month.");
        assert!(got.iter().any(|c| c == "User takes rifampicin"), "{got:?}");
        assert!(got.iter().any(|c| c == "User takes isoniazid"), "{got:?}");
        let (content, _, _) = medication("the doctor gave me mometasone nose spray also").unwrap();
        assert_eq!(content, "User takes mometasone nose spray");
        let (content, _, _) = medication("oh also i get migraines with aura, on propanolol 40mg twice a day").unwrap();
        assert_eq!(content, "User takes propranolol 40 mg twice a day");
        let (content, _, _) = medication("Oh and I take alendronic acid on Monday mornings for my bones").unwrap();
        assert_eq!(content, "User takes alendronic acid");
        // What it is said to be goes with it: a later "my blood pressure pill" names it so.
        let (content, _, value) =
            medication("My doctor has me on lisinopril, the blood pressure pill, 10 milligrams.").unwrap();
        assert_eq!(
            (content.as_str(), value.as_str()),
            ("User takes lisinopril (the blood pressure pill) 10 milligrams", "10 milligrams")
        );
        // Someone else's clause is not the user's; the user's own clause keeps what it says.
        assert_eq!(medication("my dad is diabetic, on metformin 500 twice a day"), None);
        let got =
            crate::extract::heuristic::tests::contents("shud prob say im epaleptic, on lamotrigine 100mg twice a day");
        assert!(got.iter().any(|c| c == "User is epileptic"), "{got:?}");
        assert!(got.iter().any(|c| c == "User takes lamotrigine 100 mg twice a day"), "{got:?}");
    }

    #[test]
    fn what_the_user_cannot_take_is_read_with_its_i_left_out_and_each_name() {
        let got = crate::extract::heuristic::tests::contents("and cant have penicilin, i swells right up");
        assert!(got.iter().any(|c| c.starts_with("User cannot take penicillin")), "{got:?}");
        let got = crate::extract::heuristic::tests::contents(
            "Also you know, I cannot take the aspirin or the ibuprofen, I had ulcer in stomach 2019.",
        );
        assert!(got.iter().any(|c| c.starts_with("User cannot take aspirin:")), "{got:?}");
        assert!(got.iter().any(|c| c.starts_with("User cannot take ibuprofen:")), "{got:?}");
        let got = crate::extract::heuristic::tests::contents(
            "I can't take aspirin or nothing like that, had a stomach bleed",
        );
        assert!(got.iter().any(|c| c == "User cannot take aspirin: had a stomach bleed"), "{got:?}");
        assert!(
            crate::extract::heuristic::tests::contents("my son can't have penicillin")
                .iter()
                .all(|c| !c.starts_with("User cannot take")),
        );
    }

    #[test]
    fn what_is_no_medicine_is_not_read_as_one() {
        for text in [
            "I'm on holiday until Monday.",
            "I take the bus to work.",
            "I'm on nights this week.",
            "I drink coffee every morning.",
            "I'm on the waiting list for a flat.",
            "I take photos of old churches.",
            "Should I take ibuprofen 400 mg for this?",
        ] {
            assert_eq!(medication(text), None, "{text:?}");
        }
    }
}
