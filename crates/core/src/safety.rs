//! Constraints that protect the user: an allergy, a medical condition, an accessibility need, a
//! strict diet. Said once in passing, such a fact must reach the block whenever a request bears
//! on it (a recipe, a hike, a trip, a medicine) even when the request does not name it — and
//! stay out of turns it has nothing to do with.
//!
//! Pure: a store keeps each memory's [`constraint_domains`] beside it when it is written; the
//! engine asks [`query_domains`] what a request is about and, only when it is about something a
//! constraint can bear on, asks the store for the user's memories whose domains meet the
//! request's. Finding them is a lookup, never a search over everything the user said.

use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::kind::text_enum;

text_enum!(
    /// What part of life a request (or a constraint) is about.
    Domain, "domain" {
        /// Cooking, eating out, groceries, drinks.
        Food => "food",
        /// Medicines, doctors, treatments.
        Medication => "medication",
        /// Workouts, sport, hikes, physical effort.
        Exercise => "exercise",
        /// Trips, venues, getting around, events out.
        Travel => "travel",
    }
);

/// A set of domains (a request can be about food and travel at once).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Domains(u8);

impl Domains {
    /// No domain.
    pub const NONE: Domains = Domains(0);

    fn with(self, d: Domain) -> Self {
        Domains(self.0 | 1 << d as u8)
    }

    /// Whether no domain is in the set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the two sets share a domain.
    pub fn meets(self, other: Domains) -> bool {
        self.0 & other.0 != 0
    }

    /// The set as stored beside a memory (one bit per [`Domain`], in declaration order), so a
    /// store finds a user's constraints by a column instead of searching their words.
    pub fn bits(self) -> u8 {
        self.0
    }

    /// The set a store kept with [`Domains::bits`]; bits of no domain are dropped.
    pub fn from_bits(bits: u8) -> Self {
        Domains(bits & ((1 << Domain::ALL.len()) - 1))
    }

    /// The domains in the set, in declaration order.
    pub fn iter(self) -> impl Iterator<Item = Domain> {
        Domain::ALL.iter().copied().filter(move |d| self.0 & (1 << *d as u8) != 0)
    }
}

/// Words that put a request in a domain (matched as word prefixes, case-insensitively).
const REQUEST_WORDS: &[(Domain, &str)] = &[
    (
        Domain::Food,
        r"cook|recipe|bake|baking|dinner|lunch|breakfast|brunch|supper|meal|snack|dessert|cake|cookie|bread|pasta|curry|soup|salad|sandwich|pizza|sauce|dish\b|dishes|menu|restaurant|cafe|café|takeaway|takeout|eat\b|eating|ate\b|food|grocer|ingredient|kitchen|barbecue|bbq|grill|picnic|potluck|drink|cocktail|wine|beer|smoothie|dining|diner|feast|party food|canap|appetizer|starter|stir.?fr|roast|fry\b|fried|frying|vegan option|nuts?\b|peanut|dairy|gluten|chocolate|sushi|taco|burger",
    ),
    (
        Domain::Medication,
        r"medic|pill|tablet|drug|prescri|dose|dosage|pharmac|painkiller|ibuprofen|aspirin|paracetamol|antibiotic|vaccin|doctor|treatment|supplement|vitamin|remedy|cold medicine|headache|fever|symptom",
    ),
    (
        Domain::Exercise,
        r"workout|work out|exercis|gym|run\b|runs\b|running|jog|hike|hiking|trek|climb|swim|cycl|bike ride|yoga|pilates|lifting|weightlift|training|train for|marathon|sport|stretch|cardio|fitness|walk\b|walks\b|walking|dance class|tennis|football|soccer|basketball",
    ),
    (
        Domain::Travel,
        r"trips?\b|travel|flight|fly |flying|hotel|airbnb|hostel|vacation|holiday|getaway|itinerary|tours?\b|touring|visit|sightseeing|museum|concert|festival|venue|theat|cinema|stadium|weekend away|road trip|train to|cruise|camping|beach|city break|day out|outing|excursion",
    ),
];

/// Words that mark a memory as a constraint, with the domains it bears on.
const CONSTRAINT_WORDS: &[(&str, &[Domain])] = &[
    (r"allerg|anaphyla|epipen|epi-pen", &[Domain::Food, Domain::Medication, Domain::Travel]),
    (r"intoleran|celiac|coeliac|gluten.free|lactose|crohn|ibs\b", &[Domain::Food, Domain::Medication]),
    (r"diabet|insulin", &[Domain::Food, Domain::Medication, Domain::Exercise]),
    (
        r"vegan|vegetarian|pescatarian|halal|kosher|(?:don't|do not|doesn't|does not|never|can't|cannot)\s+eat|(?:can't|cannot)\s+have\s+(?:dairy|gluten|nuts|eggs|wheat|shellfish|milk)",
        &[Domain::Food],
    ),
    (
        r"asthma|inhaler|heart condition|pacemaker|epilep|seizure|high blood pressure|hypertension",
        &[Domain::Exercise, Domain::Medication, Domain::Travel],
    ),
    (r"pregnan", &[Domain::Food, Domain::Medication, Domain::Exercise, Domain::Travel]),
    (
        r"wheelchair|mobility|crutches|walking stick|cane\b|blind|visually impaired|deaf|hard of hearing|hearing aid|bad knee|knee injury|back injury|chronic pain|arthritis|vertigo|fear of heights|claustrophob",
        &[Domain::Exercise, Domain::Travel],
    ),
    (
        r"blood thinner|warfarin|xarelto|eliquis|pradaxa|on medication|takes? medication|immunocompromised|chemo|(?:cannot|can't|can not) take",
        &[Domain::Medication, Domain::Food, Domain::Travel],
    ),
    // Medicines with interactions a request can run into (grapefruit and statins, painkillers
    // and anticoagulants, propranolol and asthma, isotretinoin and pregnancy).
    (
        r"statins?\b|simvastatin|atorvastatin|rosuvastatin|amlodipine|colchicine|allopurinol|metformin|levothyroxine|lithium|methotrexate|isotretinoin|roaccutane|accutane|apixaban|rivaroxaban|clopidogrel|phenprocoumon|marcoumar|acenocoumarol|sintrom|propranolol|beta.?blocker|sertraline|fluoxetine|citalopram|antidepressant|prednisolone|prednisone|steroids\b|lisinopril|losartan|amiodarone|digoxin|tramadol|anticoagulant",
        &[Domain::Medication, Domain::Food],
    ),
    // Any medicine taken at a dose ("User takes enalapril 20 mg"), or named by its family's
    // ending, and the conditions a medicine or a meal can bear on.
    (
        r"\d+(?:[.,]\d+)?\s?(?:mg|mcg|µg)\b|\w+(?:pril|sartan|olol|dipine|prazole|xaban|parin|formin|oxetine|azepam)\b|high cholesterol|kidney disease|ulcerative colitis",
        &[Domain::Medication, Domain::Food],
    ),
];

fn request_res() -> &'static Vec<(Domain, Regex)> {
    static RE: OnceLock<Vec<(Domain, Regex)>> = OnceLock::new();
    RE.get_or_init(|| {
        REQUEST_WORDS.iter().map(|(d, p)| (*d, Regex::new(&format!(r"(?i)\b(?:{p})")).expect("domain words"))).collect()
    })
}

fn constraint_res() -> &'static Vec<(Regex, Domains)> {
    static RE: OnceLock<Vec<(Regex, Domains)>> = OnceLock::new();
    RE.get_or_init(|| {
        CONSTRAINT_WORDS
            .iter()
            .map(|(p, ds)| {
                let set = ds.iter().fold(Domains::NONE, |acc, d| acc.with(*d));
                (Regex::new(&format!(r"(?i)\b(?:{p})")).expect("constraint words"), set)
            })
            .collect()
    })
}

/// The domains a request is about ("any ideas for a birthday dinner?" → food).
pub fn query_domains(query: &str) -> Domains {
    request_res().iter().filter(|(_, re)| re.is_match(query)).fold(Domains::NONE, |acc, (d, _)| acc.with(*d))
}

/// The domains a memory's content bears on when it states a constraint; empty otherwise.
pub fn constraint_domains(content: &str) -> Domains {
    constraint_res()
        .iter()
        .filter(|(re, _)| re.is_match(content))
        .fold(Domains::NONE, |acc, (_, d)| Domains(acc.0 | d.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(d: Domains) -> Vec<&'static str> {
        d.iter().map(Domain::as_str).collect()
    }

    #[test]
    fn requests_fall_in_their_domains() {
        assert_eq!(names(query_domains("Can you suggest a recipe for Sunday dinner?")), vec!["food"]);
        assert_eq!(names(query_domains("planning a hike in the Alps next month, tips?")), vec!["exercise"]);
        assert_eq!(names(query_domains("which painkiller is ok for a headache")), vec!["medication"]);
        assert_eq!(names(query_domains("Booking a hotel in Rome for our trip")), vec!["travel"]);
        assert!(query_domains("How do I center a div in CSS?").is_empty());
        assert!(query_domains("What's a good name for my cat?").is_empty());
    }

    #[test]
    fn constraints_bear_on_their_domains_only() {
        let peanuts = constraint_domains("User is allergic to peanuts");
        assert!(peanuts.meets(query_domains("any dessert ideas for the party?")));
        assert!(!peanuts.meets(query_domains("help me fix this SQL query")));
        assert!(constraint_domains("User uses a wheelchair").meets(query_domains("plan a city trip to Porto")));
        assert!(constraint_domains("User has asthma").meets(query_domains("a workout plan for beginners")));
        assert!(constraint_domains("User is vegan").meets(query_domains("what should I cook tonight")));
        assert!(constraint_domains("User doesn't eat pork").meets(query_domains("a dinner menu")));
        assert!(constraint_domains("User can't have dairy").meets(query_domains("snack ideas for my night shift")));
        assert!(
            constraint_domains("User carries an EpiPen for a severe allergy").meets(query_domains("a picnic menu"))
        );
        assert!(constraint_domains("User has epilepsy").meets(query_domains("any tips for my trip to Rome?")));
        // A medicine with interactions bears on what is eaten and taken with it.
        assert!(
            constraint_domains("User takes simvastatin every night")
                .meets(query_domains("is grapefruit juice ok for breakfast?"))
        );
        // A medicine the user cannot take bears on what is suggested for pain or a fever.
        assert!(
            constraint_domains("User cannot take chloroquine: their body will be scratching them")
                .meets(query_domains("which painkiller is ok for a headache"))
        );
        assert!(
            constraint_domains("User is on roaccutane for their skin")
                .meets(query_domains("can I take ibuprofen for this headache"))
        );
        assert!(constraint_domains("User takes enalapril 20 mg").meets(query_domains("is ibuprofen ok for my back?")));
        assert!(constraint_domains("User takes the bus to work").is_empty(), "no medicine, no constraint");
        assert!(
            constraint_domains("User was put on propranolol for stage fright")
                .meets(query_domains("which painkiller is ok"))
        );
        assert!(constraint_domains("User's statement was about statistics").is_empty());
        assert!(constraint_domains("User can't have a dog in the flat").is_empty());
        assert!(constraint_domains("User has a dog named Biscuit").is_empty());
        assert!(constraint_domains("User loves hiking").is_empty());
    }

    #[test]
    fn stored_bits_give_back_the_set() {
        for content in ["User is allergic to peanuts", "User is pregnant", "User has asthma", "User likes tea"] {
            let d = constraint_domains(content);
            assert_eq!(Domains::from_bits(d.bits()), d, "{content}");
        }
        // Bits of no domain (a store written by a later version) are dropped, not misread.
        assert_eq!(Domains::from_bits(0xF0), Domains::NONE);
        assert!(Domains::from_bits(0xFF).meets(query_domains("a recipe for dinner")));
    }
}
