//! Word lists and small text helpers shared by the rule families.
//!
//! Kept in one place so a rule's regular expression and the code reading its captures agree on
//! what a "relation", a "mood" or a "tool" is.

use std::sync::OnceLock;

use regex::Regex;

use crate::shape::WEEKDAY_NAMES as WEEKDAYS;
use crate::text::{is_stopword, tidy};

/// Pattern placeholders, expanded by [`expand`] before a rule is compiled. The long ones are
/// scoped `(?x:...)` groups, so they read the same in a pattern written with or without `(?x)`.
const PLACEHOLDERS: &[(&str, &str)] = &[
    ("<IM>", r"i(?:'m|\s+am)"),
    ("<IVE>", r"i(?:'ve|\s+have)"),
    ("<ID>", r"i(?:'d|\s+would)"),
    ("<DONT>", r"(?:don't|do\s+not|dont)"),
    (
        "<ADV>",
        r"(?x:
            # adverbs and fillers between the subject and the verb: I really do like ...
            (?:
                (?:
                    really | absolutely | truly | genuinely | totally | just | also | still | do
                    | kinda | kind\s+of | sort\s+of | especially | particularly | actually | honestly
                    | definitely | seriously | now | currently | mostly | mainly | always | usually
                    | generally | pretty\s+much | so | very\s+much
                )
                \s+
            )*
        )",
    ),
    ("<NAME>", r"(?-i:[A-Z\u{C0}-\u{DE}])[\w'-]*(?:\s+(?-i:[A-Z\u{C0}-\u{DE}])[\w'-]*)?"),
    ("<NAMEI>", r"[A-Za-z\u{C0}-\u{FF}][\w'-]*(?:\s+(?-i:[A-Z\u{C0}-\u{DE}])[\w'-]*)?"),
    ("<TAIL>", r"[^.;!?]+"),
    ("<CLAUSE>", r"[^,.;!?]+"),
    (
        "<PLACE>",
        r"(?P<x>[^,.;!?]+?)(?:\s+(?:but|and|so|because|though|although|while|since|which|who|when|where|for|with|to\s+be|now|these\s+days|at\s+the\s+moment)\b|\s*$|\s*[,.;!?])",
    ),
    (
        "<MONTH_DAY>",
        r"(?x:
            # month first: July 4, Jul. 4th
            (?:
                january | february | march | april | may | june | july | august | september
                | october | november | december
                | jan | feb | mar | apr | jun | jul | aug | sept | sep | oct | nov | dec
            )
            \.?\s+\d{1,2}(?:st|nd|rd|th)?
            # day first: 4 July, 4th of July
            | \d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?
            (?:
                january | february | march | april | may | june | july | august | september
                | october | november | december
            )
        )",
    ),
];

/// Family and close relations ("my sister", "my boss"); the longest forms first.
pub(super) const RELATIONS: &str = "sis|bro|cuzzie|cuz|hubby|missus|missis|wifey|bf|gf|mother-in-law|father-in-law|sister-in-law|brother-in-law|in-laws|\
    stepmom|stepmother|stepdad|stepfather|stepson|stepdaughter|stepbrother|stepsister|\
    wife|husband|spouse|partner|boyfriend|girlfriend|fiancée|fiancee|fiancé|fiance|ex-wife|ex-husband|\
    sons|son|daughters|daughter|kids|kid|children|child|baby|toddler|twins|\
    mom|mum|mother|mommy|mummy|mama|dad|father|daddy|papa|parents|\
    sisters|sister|brothers|brother|siblings|sibling|twin|\
    grandma|grandmother|granny|nana|nan|gran|grandpa|grandfather|grandparents|grandson|granddaughter|grandkids|grandchildren|\
    aunt|auntie|uncle|cousin|niece|nephew|godson|goddaughter|\
    best\\s+friend|bff|friend|roommate|flatmate|housemate|neighbou?r|\
    boss|manager|coworker|co-worker|colleague|teammate|mentor|therapist|doctor|landlord";

/// Pets ("my dog", "a cat named Miso").
pub(super) const SPECIES: &str = "dogs|dog|puppy|puppies|pup|cats|cat|kitten|kittens|kitty|rabbits|rabbit|bunny|\
    hamsters|hamster|guinea\\s+pigs?|parrots?|budgies?|cockatiels?|birds?|goldfish|fish|turtles?|tortoises?|\
    snakes?|lizards?|geckos?|horses?|pony|ponies|ferrets?|chinchillas?|hedgehogs?|rats?|mice|mouse|\
    chickens?|goats?|pigs?|axolotls?";

/// Breeds people name instead of the species ("a golden retriever called Max").
pub(super) const BREEDS: &str = "golden\\s+retriever|retriever|labrador|lab|poodle|labradoodle|goldendoodle|doodle|terrier|\
    beagle|husky|corgi|dachshund|german\\s+shepherd|shepherd|french\\s+bulldog|bulldog|frenchie|pug|chihuahua|\
    border\\s+collie|collie|cocker\\s+spaniel|spaniel|greyhound|whippet|boxer|rottweiler|pitbull|pit\\s+bull|schnauzer|\
    shih\\s+tzu|maltese|pomeranian|dalmatian|great\\s+dane|mastiff|akita|shiba|samoyed|sheepdog|tabby|siamese|persian|\
    maine\\s+coon|ragdoll|sphynx|bengal|calico";

/// Transient states of mind and body.
pub(super) const MOODS: &str = "exhausted|tired|sleepy|drained|wiped\\s+out|wiped|knackered|burn(?:ed|t)\\s+out|\
    stressed(?:\\s+out)?|anxious|nervous|worried|scared|terrified|freaking\\s+out|panicking|overwhelmed|\
    sad|down|low|blue|depressed|miserable|upset|heartbroken|devastated|lonely|homesick|bored|\
    angry|mad|furious|pissed(?:\\s+off)?|annoyed|irritated|frustrated|grumpy|cranky|moody|\
    sick|ill|unwell|hungover|jet[-\\x20]?lagged|sore|in\\s+pain|\
    happy|excited|thrilled|pumped|stoked|ecstatic|elated|proud|relieved|grateful|thankful|\
    calm|relaxed|motivated|energi[sz]ed|optimistic|hopeful|confused|stuck|discouraged|defeated|\
    restless|distracted|unmotivated|demotivated|on\\s+edge|a\\s+mess|a\\s+wreck|under\\s+the\\s+weather|\
    swamped|slammed|buried|fried|frazzled|shattered|sluggish|bummed|gutted|crushed|hyped|psyched|buzzing|chuffed|\
    giddy|peeved|salty|flat|blah|meh|out\\s+of\\s+it|down\\s+in\\s+the\\s+dumps|on\\s+top\\s+of\\s+the\\s+world|\
    over\\s+the\\s+moon|nostalgic|emotional|sentimental|irritable|tense|jittery|antsy|off";

/// Whether `word` (lower case) is one of [`MOODS`] said in one word ("nervous", "stressed").
pub(super) fn is_mood_word(word: &str) -> bool {
    !word.is_empty() && MOODS.split('|').any(|m| m.split(['(', '\\']).next() == Some(word))
}

/// Reply languages people ask for.
pub(super) const LANGUAGES: &str = "english|spanish|french|german|italian|portuguese|dutch|japanese|chinese|mandarin|\
    cantonese|korean|russian|polish|turkish|arabic|hindi|swedish|norwegian|danish|finnish|greek|hebrew|czech|\
    ukrainian|vietnamese|thai|indonesian|romanian|hungarian|catalan|bengali|urdu|persian|farsi|tagalog|swahili";

/// Nouns of occupation; "I'm a/an ... <noun>" is a job only when it ends in one of these.
pub(super) const JOBS: &str = "software\\s+engineer|engineer|developer|programmer|coder|designer|teacher|\
    nurse|doctor|physician|surgeon|dentist|pharmacist|vet|veterinarian|therapist|psychologist|psychiatrist|\
    counsel(?:l)?or|social\\s+worker|manager|director|executive|vp|ceo|cto|cfo|coo|founder|co-founder|cofounder|\
    student|grad\\s+student|phd\\s+student|postdoc|researcher|scientist|professor|lecturer|tutor|\
    writer|author|journalist|editor|copywriter|blogger|translator|\
    lawyer|attorney|paralegal|judge|accountant|auditor|banker|trader|analyst|economist|actuary|\
    consultant|architect|artist|illustrator|animator|painter|sculptor|photographer|videographer|filmmaker|\
    musician|singer|composer|producer|dj|actor|actress|dancer|\
    chef|cook|baker|barista|bartender|waiter|waitress|server|\
    pilot|flight\\s+attendant|driver|mechanic|electrician|plumber|carpenter|builder|contractor|welder|\
    farmer|gardener|firefighter|police\\s+officer|cop|paramedic|soldier|officer|\
    librarian|freelancer|entrepreneur|intern|apprentice|\
    pm|product\\s+manager|product\\s+owner|scrum\\s+master|recruiter|marketer|salesperson|sales\\s+rep|\
    administrator|admin|sysadmin|devops|sre|technician|assistant|receptionist|secretary|clerk|cashier|\
    coach|trainer|instructor|nanny|caregiver|midwife|optometrist|physiotherapist|physio|chiropractor|\
    data\\s+scientist|statistician|mathematician|physicist|chemist|biologist|geologist|\
    specialist|strategist|coordinator|planner|realtor|real\\s+estate\\s+agent|agent|broker|\
    streamer|youtuber|influencer|content\\s+creator|creator|tester|qa|lead|team\\s+lead|tech\\s+lead|\
    homemaker|housewife|househusband|retiree|pastor|priest|rabbi|imam|monk|nun|\
    machinist|technologist|hygienist|surveyor|inspector|supervisor|dispatcher|courier|\
    ux\\s+designer|ui\\s+designer|game\\s+developer|web\\s+developer|stay-at-home\\s+(?:mom|dad|parent)|\
    hairdresser|hairstylist|stylist|barber|beautician|nail\\s+tech(?:nician)?|carer|care\\s+worker|support\\s+worker|\
    porter|postman|postwoman|mail\\s+carrier|roofer|shearer|fisherman|shrimper|labou?rer|tiler|bricklayer|joiner|\
    scaffolder|decorator|butcher|fishmonger|tailor|seamstress|security\\s+guard|caretaker|janitor|housekeeper|\
    miner|docker|dock\\s+worker|warehouse\\s+worker|factory\\s+worker|shopkeeper|salesman|saleswoman|trucker|\
    cabbie|dietitian|dietician|nutritionist|childminder|lifeguard|beekeeper|landscaper|handyman|locksmith|\
    florist|optician|radiographer|sonographer|phlebotomist|anaesthetist|anesthetist|gp|rn|lpn|cna|hca|emt|\
    deckhand|sailor|skipper|steward|stewardess|sommelier|teller|social\\s+care\\s+worker|sparky|sparkie|brickie|\
    plasterer|chippie";

/// Things people plan, book or attend; with a date they are open loops.
pub(super) const EVENTS: &str = "job\\s+interview|interview|exam|final|finals|midterm|test|quiz|appointment|\
    meeting|presentation|talk|demo|pitch|flight|deadline|surgery|operation|procedure|check-?up|checkup|\
    date|wedding|party|birthday\\s+party|trip|vacation|holiday|conference|call|standup|review|\
    performance\\s+review|1:1|one-on-one|recital|concert|gig|show|game|match|race|marathon|\
    tournament|audition|hearing|court\\s+date|visit|dinner|lunch|brunch|reservation|session|class|lecture|\
    workshop|seminar|webinar|shift|defen[cs]e|viva|move|launch|release|deploy|deployment|play|school\\s+play|\
    graduation|ceremony|funeral|baby\\s+shower|shower|reunion|retreat|camp|tryouts?|orientation|training|assessment|\
    check-in|exhibition|opening|premiere|closing|appraisal|inspection|consultation|therapy|\
    ultrasound|scan|therapy\\s+session|dentist\\s+appointment|doctor'?s\\s+appointment|haircut|\
    dentist|physio|chemo|dialysis";

/// Whether `word` (lower case) is the plain form of a verb people often say of someone else
/// without its "-s", as learners do ("my son Minh start university", "he make it for me"):
/// the bases of [`IRREGULAR`], the task verbs and everyday regular verbs. A list, not a guess,
/// because the word after a name is as often a noun or an adverb ("Jo today", "Jo also").
pub(super) fn is_base_verb(word: &str) -> bool {
    const EVERYDAY: &[&str] = &[
        "start", "work", "live", "study", "finish", "want", "like", "love", "need", "play", "move", "call", "help",
        "stay", "open", "close", "change", "look", "plan", "travel", "visit", "teach", "learn", "cook", "drive", "say",
        "think", "know", "come", "go", "make", "take", "give", "get", "have", "do", "run", "sing", "dance", "swim",
        "walk", "wait", "watch", "listen", "talk", "speak", "write", "read", "sleep", "eat", "drink", "use", "try",
    ];
    EVERYDAY.contains(&word)
        || IRREGULAR.iter().any(|(_, base)| *base == word)
        || super::plan::TASK_VERBS.contains(&word)
}

/// The "-ing" form of a base verb ("move" → "moving", "get" → "getting", "look" → "looking").
pub(super) fn ing(base: &str) -> String {
    let b: Vec<char> = base.chars().collect();
    let vowel = |c: char| "aeiou".contains(c);
    match b.as_slice() {
        [.., x, 'e'] if *x != 'e' && b.len() > 2 => format!("{}ing", &base[..base.len() - 1]),
        // One short syllable ending consonant-vowel-consonant doubles its last letter ("get",
        // "stop"); "open" has two.
        [.., c1, v, c2]
            if (b.len() == 3 || (b.len() == 4 && !vowel(b[0])))
                && !vowel(*c1)
                && vowel(*v)
                && !vowel(*c2)
                && !"wxy".contains(*c2) =>
        {
            format!("{base}{c2}ing")
        }
        _ => format!("{base}ing"),
    }
}

/// A texted "-in" for "-ing" ("movin", "lookin'", "gettin"), written out when it is the "-ing"
/// of a verb [`is_base_verb`] knows: "cousin", "robin" and "begin" are words of their own.
pub(super) fn dropped_g(word: &str) -> Option<String> {
    let w = word.trim_end_matches('\'');
    let stem = w.strip_suffix("in")?;
    if stem.len() < 2 {
        return None;
    }
    let full = format!("{w}g");
    let base = [stem.to_string(), format!("{stem}e"), stem[..stem.len() - 1].to_string()]
        .into_iter()
        .find(|b| !b.is_empty() && is_base_verb(b) && ing(b) == full)?;
    Some(ing(&base))
}

/// Past-tense forms that are not just "-ed" added to the base, with their base.
const IRREGULAR: &[(&str, &str)] = &[
    ("applied", "apply"),
    ("arranged", "arrange"),
    ("ate", "eat"),
    ("baked", "bake"),
    ("became", "become"),
    ("began", "begin"),
    ("bought", "buy"),
    ("broke", "break"),
    ("brought", "bring"),
    ("built", "build"),
    ("came", "come"),
    ("canceled", "cancel"),
    ("cancelled", "cancel"),
    ("caught", "catch"),
    ("changed", "change"),
    ("chose", "choose"),
    ("closed", "close"),
    ("completed", "complete"),
    ("confirmed", "confirm"),
    ("declined", "decline"),
    ("did", "do"),
    ("drank", "drink"),
    ("drew", "draw"),
    ("dropped", "drop"),
    ("drove", "drive"),
    ("emailed", "email"),
    ("fed", "feed"),
    ("fell", "fall"),
    ("felt", "feel"),
    ("filed", "file"),
    ("finalised", "finalise"),
    ("finalized", "finalize"),
    ("flew", "fly"),
    ("forgot", "forget"),
    ("fought", "fight"),
    ("found", "find"),
    ("gave", "give"),
    ("got", "get"),
    ("grew", "grow"),
    ("had", "have"),
    ("heard", "hear"),
    ("held", "hold"),
    ("hired", "hire"),
    ("hung", "hang"),
    ("invited", "invite"),
    ("kept", "keep"),
    ("knew", "know"),
    ("led", "lead"),
    ("left", "leave"),
    ("lent", "lend"),
    ("lost", "lose"),
    ("made", "make"),
    ("meant", "mean"),
    ("messaged", "message"),
    ("met", "meet"),
    ("mopped", "mop"),
    ("moved", "move"),
    ("organised", "organise"),
    ("organized", "organize"),
    ("paid", "pay"),
    ("paid off", "pay off"),
    ("phoned", "phone"),
    ("planned", "plan"),
    ("practiced", "practice"),
    ("practised", "practise"),
    ("prepared", "prepare"),
    ("published", "publish"),
    ("purchased", "purchase"),
    ("put", "put"),
    ("raked", "rake"),
    ("ran", "run"),
    ("rang", "ring"),
    ("read", "read"),
    ("received", "receive"),
    ("recorded", "record"),
    ("registered", "register"),
    ("released", "release"),
    ("renewed", "renew"),
    ("replied", "reply"),
    ("resolved", "resolve"),
    ("returned", "return"),
    ("rode", "ride"),
    ("said", "say"),
    ("sang", "sing"),
    ("sat", "sit"),
    ("saw", "see"),
    ("scheduled", "schedule"),
    ("sent", "send"),
    ("set", "set"),
    ("shared", "share"),
    ("shipped", "ship"),
    ("shut", "shut"),
    ("signed", "sign"),
    ("slept", "sleep"),
    ("sold", "sell"),
    ("solved", "solve"),
    ("sorted", "sort"),
    ("spent", "spend"),
    ("spoke", "speak"),
    ("stole", "steal"),
    ("stood", "stand"),
    ("stopped", "stop"),
    ("studied", "study"),
    ("submitted", "submit"),
    ("swam", "swim"),
    ("taught", "teach"),
    ("texted", "text"),
    ("thought", "think"),
    ("threw", "throw"),
    ("tidied", "tidy"),
    ("told", "tell"),
    ("took", "take"),
    ("tore", "tear"),
    ("understood", "understand"),
    ("updated", "update"),
    ("uploaded", "upload"),
    ("vacuumed", "vacuum"),
    ("went", "go"),
    ("wired", "wire"),
    ("woke", "wake"),
    ("won", "win"),
    ("wore", "wear"),
    ("wrapped", "wrap"),
    ("wrote", "write"),
];

/// Verbs whose past tense says nothing was completed ("I tried to", "I wanted to"), or whose
/// completion is read by the "no longer" family instead ("I stepped down as coordinator",
/// "I resigned from the board": a role given up, which ends its memory).
pub(super) const NOT_DONE: &[&str] = &[
    "added",
    "adopted",
    "agreed",
    "allowed",
    "appeared",
    "assumed",
    "believed",
    "considered",
    "decided",
    "described",
    "divorced",
    "dreamed",
    "dreamt",
    "ended",
    "enjoyed",
    "expected",
    "feared",
    "felt",
    "figured",
    "forgot",
    "grew",
    "guessed",
    "had",
    "happened",
    "hated",
    "heard",
    "hoped",
    "imagined",
    "included",
    "intended",
    "involved",
    "joined",
    "kept",
    "learned",
    "learnt",
    "left",
    "liked",
    "lived",
    "looked",
    "loved",
    "managed",
    "married",
    "meant",
    "mentioned",
    "missed",
    "moved",
    "named",
    "needed",
    "noted",
    "noticed",
    "offered",
    "opened",
    "owned",
    "planned",
    "played",
    "preferred",
    "promised",
    "quit",
    "realised",
    "realized",
    "reckoned",
    "relocated",
    "remembered",
    "required",
    "resigned",
    "retired",
    "said",
    "seemed",
    "spent",
    "started",
    "stayed",
    "stepped",
    "stopped",
    "supposed",
    "switched",
    "thought",
    "tried",
    "turned",
    "used",
    "waited",
    "wanted",
    "was",
    "watched",
    "were",
    "wished",
    "wondered",
    "worked",
    "worried",
];

/// Words that identify nothing on their own: stripped from matching targets.
pub(super) const GENERIC: &[&str] = &[
    "a",
    "about",
    "actually",
    "again",
    "ages",
    "ago",
    "all",
    "also",
    "am",
    "amazing",
    "an",
    "and",
    "any",
    "anymore",
    "anything",
    "are",
    "at",
    "awesome",
    "be",
    "been",
    "before",
    "bit",
    "cool",
    "day",
    "days",
    "details",
    "did",
    "do",
    "does",
    "don't",
    "drink",
    "eat",
    "enjoy",
    "enjoys",
    "ever",
    "everything",
    "fact",
    "few",
    "for",
    "from",
    "fun",
    "go",
    "goes",
    "good",
    "great",
    "had",
    "hang",
    "has",
    "hate",
    "hates",
    "have",
    "hour",
    "hours",
    "i",
    "i'd",
    "i'll",
    "i'm",
    "i've",
    "in",
    "info",
    "information",
    "is",
    "it",
    "its",
    "just",
    "knew",
    "know",
    "last",
    "lately",
    "like",
    "likes",
    "live",
    "lives",
    "living",
    "longer",
    "lot",
    "lots",
    "love",
    "loves",
    "me",
    "memory",
    "mention",
    "mentioned",
    "mine",
    "minute",
    "minutes",
    "month",
    "months",
    "more",
    "much",
    "my",
    "myself",
    "name",
    "names",
    "new",
    "next",
    "nice",
    "no",
    "not",
    "note",
    "notes",
    "now",
    "of",
    "old",
    "on",
    "or",
    "other",
    "our",
    "own",
    "part",
    "play",
    "playing",
    "plays",
    "please",
    "prefer",
    "prefers",
    "pretty",
    "really",
    "recently",
    "said",
    "same",
    "say",
    "since",
    "some",
    "something",
    "still",
    "stuff",
    "tell",
    "that",
    "the",
    "their",
    "them",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "time",
    "to",
    "today",
    "told",
    "tomorrow",
    "tonight",
    "us",
    "use",
    "uses",
    "using",
    "want",
    "wants",
    "was",
    "way",
    "we",
    "week",
    "weekend",
    "weeks",
    "well",
    "were",
    "what",
    "while",
    "whole",
    "with",
    "work",
    "working",
    "works",
    "year",
    "years",
    "yesterday",
    "you",
    "your",
];

/// Kinship words that read as names ("call mom"): no possessive in stored content.
pub(super) const NAME_LIKE: &[&str] =
    &["dad", "daddy", "grandma", "grandpa", "granny", "mama", "mom", "mommy", "mum", "mummy", "nan", "nana", "papa"];

/// Expands `<PLACEHOLDER>`s and compiles a case-insensitive rule pattern.
pub(super) fn expand(p: &str) -> Regex {
    let mut s = p.to_string();
    for (k, v) in PLACEHOLDERS {
        s = s.replace(k, v);
    }
    for (k, v) in [
        ("<REL>", RELATIONS),
        ("<SPECIES>", SPECIES),
        ("<MOOD>", MOODS),
        ("<LANG>", LANGUAGES),
        ("<JOB>", JOBS),
        ("<EVENT>", EVENTS),
        ("<BREED>", BREEDS),
    ] {
        s = s.replace(k, &format!("(?:{v})"));
    }
    Regex::new(&format!("(?i){s}")).unwrap_or_else(|e| panic!("extractor rule {p:?}: {e}"))
}

/// `text` with its first letter upper case.
pub(super) fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) if c.is_lowercase() => c.to_uppercase().chain(chars).collect(),
        _ => text.to_string(),
    }
}

/// Rewrites first-person words so stored content reads about the user, not as the user.
///
/// Kinship words used as names keep no possessive ("call my mom" becomes "call mom"), so the
/// content holds the words a later "called mom" will be matched on.
pub(super) fn third_person(s: &str) -> String {
    rewrite_first_person(s, None)
}

/// [`third_person`] for the rest of a sentence that speaks of someone else too ("she said my
/// BP is creeping", "they don't give me the new one", "my doctor has me on …"): where another
/// person stood since the user was last named (`after_someone` for the subject the rest
/// follows, a relative of the user's), "they", "them" and "their" would read as that person,
/// so the user's words name the user ("she said User's BP", "give User the new one", "User's
/// doctor has User on"); where no one did ("Raymond is slow, my eyes aren't …") they stay
/// "their". A verb that would have to agree ("I take") keeps "they", unless "them" or "they"
/// follows close ("I sent them the email" is "User sent them the email").
pub(super) fn third_person_naming_user(s: &str, after_someone: bool) -> String {
    rewrite_first_person(s, Some(after_someone))
}

/// Whether a word stands for a person other than the user ("she", "them", "doctor", "Carol's",
/// "Carol said"). A capital alone is no person ("September", "Düsseldorf"): a name counts with
/// a possessive or a verb after it.
fn someone_else(word: &str, next: Option<&str>) -> bool {
    let b = bare(word);
    let named = word.starts_with(char::is_uppercase)
        && !matches!(b.as_str(), "i" | "i'm" | "i've" | "i'll" | "i'd")
        && !NOT_NAMES.contains(&b.trim_end_matches("'s"))
        && (b.ends_with("'s")
            || next.is_some_and(|n| {
                matches!(
                    n.to_lowercase().trim_matches(|c: char| !c.is_alphanumeric()),
                    "is" | "was"
                        | "has"
                        | "had"
                        | "said"
                        | "says"
                        | "will"
                        | "thinks"
                        | "wants"
                        | "told"
                        | "asked"
                        | "got"
                        | "gets"
                        | "does"
                        | "did"
                        | "can"
                        | "could"
                        | "would"
                )
            }));
    matches!(b.as_str(), "he" | "she" | "him" | "her" | "his" | "hers" | "they" | "them" | "he's" | "she's" | "they're")
        || is_relation_word(&b)
        || named
}

/// Whether a word before a noun says which one ("a", "the", "this"): "a mine" is a pit, not
/// the user's.
pub(super) fn determines(w: &str) -> bool {
    matches!(
        w,
        "a" | "an" | "the" | "this" | "that" | "every" | "each" | "another" | "coal" | "gold" | "copper" | "iron"
    )
}

fn rewrite_first_person(s: &str, naming: Option<bool>) -> String {
    let words: Vec<&str> = s.split(' ').filter(|w| !w.is_empty()).collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut other = naming.unwrap_or(false);
    let mut skip_next = false;
    for (i, w) in words.iter().enumerate() {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        let lower = w.to_lowercase();
        let next = words.get(i + 1).map(|n| n.to_lowercase().trim_matches(|c: char| !c.is_alphanumeric()).to_string());
        if naming.is_some() {
            let bare = lower.trim_end_matches(|c: char| !c.is_alphanumeric());
            let plural_near = || {
                words[i + 1..]
                    .iter()
                    .take(3)
                    .any(|n| matches!(n.to_lowercase().trim_matches(|c: char| !c.is_alphanumeric()), "them" | "they"))
            };
            let named = match bare {
                "my" if next.as_deref().is_some_and(|n| NAME_LIKE.contains(&n)) => None,
                "my" | "mine" if other => Some("User's"),
                "me" if other && me_is_my(next.as_deref(), false) => Some("User's"),
                "me" if other => Some("User"),
                "i" if (other || plural_near()) && next.as_deref().is_some_and(same_after_any_subject) => Some("User"),
                // "my wife wants a cruise but I get seasick": after someone else, "they" would
                // be them; the user is named and a plain verb agrees ("User gets seasick").
                "i" if other && next.as_deref().is_some_and(plain_verb) => {
                    let verb = words[i + 1];
                    let trail = &verb[verb.trim_end_matches(|c: char| !c.is_alphanumeric()).len()..];
                    out.push(format!(
                        "User {}{trail}",
                        third_singular(verb.trim_end_matches(|c: char| !c.is_alphanumeric()))
                    ));
                    skip_next = true;
                    other = false;
                    continue;
                }
                // "my sister is getting married and I am the bridesmaid": "they are" would be
                // the sister.
                "i" if other && matches!(next.as_deref(), Some("am" | "was")) => {
                    let verb = words[i + 1];
                    let trail = &verb[verb.trim_end_matches(|c: char| !c.is_alphanumeric()).len()..];
                    let agreed = if next.as_deref() == Some("am") { "is" } else { "was" };
                    out.push(format!("User {agreed}{trail}"));
                    skip_next = true;
                    other = false;
                    continue;
                }
                "i'm" if other => Some("User is"),
                "i've" if other => Some("User has"),
                "i'll" if other => Some("User will"),
                "i'd" if other => Some("User would"),
                _ => None,
            };
            if let Some(named) = named {
                let trail = &w[w.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '\'').len()..];
                out.push(format!("{named}{trail}"));
                other = false;
                continue;
            }
            if matches!(bare, "i" | "me" | "my" | "mine" | "i'm" | "i've" | "i'll" | "i'd" | "myself") {
                other = false;
            } else if someone_else(w, words.get(i + 1).copied()) {
                other = true;
            }
        }
        let r = match lower.as_str() {
            "my" | "our" if next.as_deref().is_some_and(|n| NAME_LIKE.contains(&n)) => continue,
            "my" | "our" => "their",
            "mine" if i > 0 && determines(&words[i - 1].to_lowercase()) => {
                out.push((*w).to_string());
                continue;
            }
            "mine" | "ours" => "theirs",
            // Mid-sentence, "me" is "my" only before what is someone's own.
            "me" if me_is_my(next.as_deref(), false) => "their",
            // "so me and the kids are at my mum's": the user with others, not "them and the kids".
            // Only before someone named: "around me and take a break" goes on with a verb.
            "me" if i + 2 < words.len()
                && matches!(next.as_deref(), Some("and" | "n" | "&"))
                && (words[i + 2].starts_with(char::is_uppercase)
                    || matches!(
                        words[i + 2].to_lowercase().as_str(),
                        "the" | "my" | "our" | "his" | "her" | "their" | "a" | "an" | "two" | "both" | "all"
                    )) =>
            {
                "User"
            }
            "me" | "us" => "them",
            "myself" | "ourselves" => "themselves",
            "i" | "we" => {
                // An inverted verb agrees too: "wow, was I blown away" → "was they" reads wrong.
                if let Some(prev) = out.last_mut() {
                    let agreed = match prev.to_lowercase().as_str() {
                        "was" => Some("were"),
                        "wasn't" => Some("weren't"),
                        "am" => Some("are"),
                        _ => None,
                    };
                    if let Some(agreed) = agreed {
                        *prev =
                            if prev.starts_with(char::is_uppercase) { capitalised(agreed) } else { agreed.to_string() };
                    }
                }
                "they"
            }
            "i'm" | "we're" => "they're",
            "i've" | "we've" => "they've",
            "i'd" | "we'd" => "they'd",
            "i'll" | "we'll" => "they'll",
            // After "I" said as "User" ([`third_person_naming_user`]) the verb agrees with it.
            "am" if i > 0 && out.last().is_some_and(|p| p == "User") => "is",
            "was" if i > 0 && out.last().is_some_and(|p| p == "User") => "was",
            "am" if i > 0 && matches!(words[i - 1].to_lowercase().as_str(), "i") => "are",
            "was" if i > 0 && matches!(words[i - 1].to_lowercase().as_str(), "i") => "were",
            _ => {
                out.push((*w).to_string());
                continue;
            }
        };
        out.push(r.to_string());
    }
    out.join(" ")
}

fn clause_cut() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?x)
                (?i)(?:
                    [,;!?()\[\]]
                    | [.:](?:\s|$)
                    | \s-\s
                    | \s+(?:
                        but
                        | because
                        | cause
                        | cuz
                        | coz
                        | since
                        | though
                        | although
                        | which
                        | who
                        | unless
                        | while
                        | whereas
                        | whenever
                        | except
                        | lol
                        | haha
                        | hahaha
                        | lmao
                        | btw
                        | tbh
                        | honestly
                        | anyway
                        | anyways
                        | and\s+(?:i|i'm|i've|my|we|we're|it|it's|that|then|also|so|now|they|he|she|you)
                        | so\s+(?:i|i'm|it|that|we)
                        | if
                        | when
                        | as\s+well
                        | too
                        | either
                        | anymore
                        | any\s+more
                        | any\s+longer
                        | now
                        | these\s+days
                        | nowadays
                        | right\s+now
                        | at\s+the\s+moment
                        | currently
                        | for\s+now
                        | again
                        | ever\s+since
                        | please
                        | pls
                        | thanks
                        | thank\s+you
                        | so\s+much
                        | a\s+lot
                        | very\s+much
                        | instead
                    )
                    \b
                )
            ",
        )
        .expect("clause cut regex")
    })
}

/// The head of a captured phrase, up to the first clause break or trailing adverb.
pub(super) fn head(s: &str) -> &str {
    let s = s.trim_start();
    let cut = clause_cut()
        .find_iter(s)
        .find(|m| !between_adjectives(s, m.start(), m.as_str()))
        .map_or(s, |m| &s[..m.start()]);
    cut.trim().trim_end_matches(|c: char| !c.is_alphanumeric() && c != '+' && c != '#' && c != ')')
}

/// Whether the comma at `at` only separates two words describing one noun ("a safe, inclusive
/// space"): it comes right after "a"/"an" and one word, and a word that opens no clause follows.
fn between_adjectives(s: &str, at: usize, found: &str) -> bool {
    if found != "," {
        return false;
    }
    let before: Vec<&str> = s[..at].split_whitespace().rev().take(2).collect();
    let after = s[at + 1..].split_whitespace().next().unwrap_or("");
    const OPENS_CLAUSE: &[&str] = &[
        "i",
        "it",
        "it's",
        "we",
        "they",
        "he",
        "she",
        "you",
        "but",
        "and",
        "so",
        "which",
        "that",
        "who",
        "because",
        "especially",
        "too",
        "as",
        "like",
        "though",
        "then",
        "plus",
        "or",
        "not",
        "just",
        "honestly",
        "really",
        "actually",
        "probably",
        "definitely",
        "usually",
        "obviously",
        "basically",
        "hopefully",
        "literally",
    ];
    let opens_clause = OPENS_CLAUSE.contains(&after);
    matches!(before.get(1).map(|w| w.to_lowercase()).as_deref(), Some("a" | "an"))
        && after.chars().all(|c| c.is_ascii_lowercase() || c == '-')
        && !after.is_empty()
        && !opens_clause
}

/// A captured phrase cut at its clause break and rewritten in the third person.
pub(super) fn phrase(s: &str) -> Option<String> {
    // A word said to the listener or a texting particle at the end ("penicillin bru", "nuts
    // lol") is no part of the thing; after "my" or "the" the word is someone ("my mate").
    let mut h = head(s);
    while let Some((rest, last)) = h.rsplit_once(char::is_whitespace) {
        if !closes_without_adding(rest, &last.to_lowercase()) {
            break;
        }
        h = rest.trim_end();
    }
    let t = third_person(&tidy(h));
    (t.chars().count() >= 2 && !is_vague(&t)).then_some(t)
}

/// Whether `last` (lower case), the word after `rest`, is a particle or a word said to the
/// listener: after "my" or "the" the word is someone ("my mate") and stays.
fn closes_without_adding(rest: &str, last: &str) -> bool {
    let owned = rest.rsplit(char::is_whitespace).next().is_some_and(|w| {
        matches!(w.to_lowercase().as_str(), "my" | "the" | "a" | "our" | "your" | "his" | "her" | "their")
    });
    TRAILING_PARTICLES.contains(&last) || (ADDRESS_TERMS.contains(&last) && !owned)
}

/// Texting particles that close a sentence without adding to it ("… btw", "… lol", "… x").
pub(super) const TRAILING_PARTICLES: &[&str] = &[
    "abeg", "btw", "eish", "fyi", "haha", "imho", "imo", "innit", "jare", "lah", "lmao", "lol", "lor", "ngl", "o",
    "sef", "sha", "smh", "tbh", "tho", "though", "x", "xx", "xxx",
];

/// Words said to the listener at the end of a sentence ("allergic to penicillin bru"); after a
/// possessive they are a person ("my mate", "the fam") and stay.
const ADDRESS_TERMS: &[&str] = &["bru", "bro", "bruh", "mate", "fam", "dude"];

/// Strips time words from a phrase ("my mom last night" → "my mom", "my job last week" → "my job").
pub(super) fn strip_times(obj: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?x)
                (?i)\b(?:
                    (?:last|this|next)\s+(?:
                        night | week | month | year | weekend | time | monday | tuesday | wednesday
                        | thursday | friday | saturday | sunday
                    )
                    | yesterday(?:\s+(?:morning|afternoon|evening|night))?
                    | this\s+(?:morning|afternoon|evening|week)
                    | today
                    | tonight
                    | earlier(?:\s+today)?
                    | just\s+now
                    | finally
                    | at\s+last
                    | already
                    | on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)
                    | over\s+the\s+weekend
                    | (?:a\s+few|a\s+couple\s+of|a|an|\d+|two|three|several)\s+(?:minutes|hours|days|weeks|months|years|hour|day|week|month|year)\s+ago
                    | recently
                    | lately
                    | the\s+other\s+day
                    | last\s+(?:fri|mon|tue|wed|thu|sat|sun)
                    | earlier\s+this\s+(?:week|month|year)
                    | for\s+(?:a\s+while|weeks|months|years|ages)
                    | (?:not\s+so\s+|not\s+that\s+)?long\s+ago
                    | a\s+while\s+(?:ago|back)
                    | some\s+time\s+ago
                    | for\s+the\s+(?:past|last)\s+(?:few\s+|couple\s+of\s+|\w+\s+)?(?:days|weeks|months|years)
                    | last\s+(?:week|month|year)
                    | in\s+the\s+end
                    | in\s+(?:january|february|march|april|may|june|july|august|september|october|november|december)(?:\s+\d{4})?
                    | in\s+(?:the\s+)?(?:spring|summer|autumn|fall|winter)
                    | in\s+(?:19|20)\d{2}
                    # on a day of a month: project officer on 1 june (never 'on May Street')
                    | on\s+(?:the\s+)?(?:
                        \d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:january|february|march|april|may|june|july|august|september|october|november|december)
                        | (?:january|february|march|april|may|june|july|august|september|october|november|december)\s+\d{1,2}(?:st|nd|rd|th)?
                      )
                    # from or since a date: team lead from 1st April, since March 2024
                    | (?:from|since|starting|as\s+of)\s+(?:the\s+)?(?:
                        \d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:january|february|march|april|may|june|july|august|september|october|november|december)(?:\s+\d{4})?
                        | (?:january|february|march|april|may|june|july|august|september|october|november|december)(?:\s+\d{1,2}(?:st|nd|rd|th)?)?(?:,?\s+\d{4})?
                        | (?:19|20)\d{2}
                      )
                    | in\s+time
                    | on\s+time
                    | successfully
                    | yay
                    | woo+
                    | haha
                    | lol
                )
                \b
            ",
        )
        .expect("past time regex")
    });
    let out = tidy(&re.replace_all(obj, " "));
    // "starting at tesco monday": a weekday closing the phrase says when, unless it ends a span
    // ("Monday to Friday").
    match out.rsplit_once(' ') {
        Some((rest, last)) if WEEKDAYS.contains(&last.to_lowercase().as_str()) => {
            let before = rest.rsplit(' ').next().unwrap_or_default().to_lowercase();
            if matches!(
                before.as_str(),
                "to" | "till" | "til" | "until" | "thru" | "through" | "and" | "&" | "-" | "or"
            ) {
                out
            } else {
                rest.trim_end_matches([',', ' ']).to_string()
            }
        }
        _ => out,
    }
}

/// The auxiliaries of a tag question, without their "n't" ("didn't I", "wasn't I", "aren't I").
const TAG_AUXILIARIES: &[&str] =
    &["are", "could", "did", "do", "does", "had", "has", "have", "is", "was", "were", "would"];

/// A sentence without the texting particles that close it ("moving to leeds next month innit",
/// "starting at tesco monday abeg", "knee op's on the 3rd lol!"): they add nothing a rule should
/// read. A tag question keeps them ("… innit?"), and a sentence that is only a particle stays.
pub(super) fn without_closing_particles(sent: &str) -> &str {
    let mut end = sent.trim_end().trim_end_matches(['.', '!']).trim_end();
    if end.len() == sent.trim_end().len() && end.ends_with(['?']) {
        return sent;
    }
    let mut stripped = false;
    // "i got us to blackpool in one piece didnt i": a tag asking to be agreed with.
    if let Some(rest) = end.rsplit_once(char::is_whitespace).and_then(|(rest, i)| {
        let tag = rest.rsplit_once(char::is_whitespace)?;
        let aux = tag.1.to_lowercase().replace('\'', "");
        (i.eq_ignore_ascii_case("i") && aux.ends_with("nt") && TAG_AUXILIARIES.contains(&&aux[..aux.len() - 2]))
            .then_some(tag.0)
    }) {
        end = rest.trim_end().trim_end_matches(',').trim_end();
        stripped = true;
    }
    while let Some((rest, last)) = end.rsplit_once(char::is_whitespace) {
        let word = last.trim_end_matches([',', '.', '!']).to_lowercase();
        if !(closes_without_adding(rest, &word) || super::readable::laughter(&word)) {
            break;
        }
        end = rest.trim_end().trim_end_matches(',').trim_end();
        stripped = true;
    }
    if stripped && end.chars().any(char::is_alphanumeric) { end } else { sent }
}

/// Whether a phrase names nothing on its own ("it", "that", "you").
pub(super) fn is_vague(s: &str) -> bool {
    let l = s.trim().to_lowercase();
    matches!(
        l.as_str(),
        "it" | "that"
            | "this"
            | "them"
            | "those"
            | "these"
            | "you"
            | "him"
            | "her"
            | "so"
            | "one"
            | "some"
            | "stuff"
            | "things"
            | "everything"
            | "anything"
            | "nothing"
            | "something"
            | "there"
            | "here"
            | "what"
            | "much"
            | "more"
            | "a lot"
            | "lots"
            | "too"
            | "well"
            | "that one"
            | "this one"
            | "yours"
            | "theirs"
            | "them all"
            | "all"
            | "both"
            | "either"
            | "the idea"
            | "that idea"
            | "the way"
            | "me"
            | "us"
            | "myself"
            | "the thought"
    ) || l.starts_with("your ")
        || l.starts_with("you ")
        || l.starts_with("it ")
        || l.starts_with("that you")
        || l.starts_with("how you")
        || l.starts_with("what you")
        || l.starts_with("the way you")
        || l.starts_with("when you")
        || l.starts_with("to be honest")
}

/// Upper-cases the first letter.
pub(super) fn title(word: &str) -> String {
    let mut cs = word.chars();
    cs.next().map(|f| f.to_uppercase().chain(cs).collect()).unwrap_or_default()
}

/// Upper-cases each word's first letter ("mary ann" → "Mary Ann").
pub(super) fn title_words(s: &str) -> String {
    s.split_whitespace().map(title).collect::<Vec<_>>().join(" ")
}

/// "a" or "an" for a noun phrase.
pub(super) fn article(np: &str) -> &'static str {
    let np = np.trim_start();
    let word = np.split_whitespace().next().unwrap_or_default();
    let lower = word.to_lowercase();
    // "a UX designer", "a user", "a one-off", but "an umbrella", "an hour", "an MBA".
    let acronym = word.len() > 1 && word.chars().all(|c| c.is_ascii_uppercase());
    if acronym {
        return if "AEFHILMNORSX".contains(word.chars().next().unwrap_or('B')) { "an" } else { "a" };
    }
    let you_sound = ["uni", "use", "usu", "uti", "eu", "one", "once", "ur"].iter().any(|p| lower.starts_with(p));
    let silent_h = ["hour", "honest", "honor", "honour", "heir"].iter().any(|p| lower.starts_with(p));
    let vowel = lower.starts_with(['a', 'e', 'i', 'o', 'u']);
    if (vowel && !you_sound) || silent_h { "an" } else { "a" }
}

/// The base form of a past-tense verb ("called" → "call", "sent" → "send").
pub(super) fn base_verb(past: &str) -> String {
    let p = past.to_lowercase();
    if let Some((_, base)) = IRREGULAR.iter().find(|(pt, _)| *pt == p) {
        return (*base).to_string();
    }
    if let Some(stem) = p.strip_suffix("ied") {
        return format!("{stem}y");
    }
    if let Some(stem) = p.strip_suffix("ed") {
        let b = stem.as_bytes();
        let n = b.len();
        // Doubled final consonant ("planned" → "plan"), except letters English doubles anyway.
        if n >= 2 && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z' | b'f') {
            return stem[..n - 1].to_string();
        }
        // "aced" → "ace", "moved" → "move", "raised" → "raise".
        let soft = matches!(b.last(), Some(b'c' | b'g' | b'v' | b'z'))
            || (n >= 2 && b[n - 1] == b's' && matches!(b[n - 2], b'a' | b'e' | b'i' | b'o' | b'u'));
        if soft {
            return format!("{stem}e");
        }
        return stem.to_string();
    }
    p
}

/// Whether a word is a past-tense verb this module knows how to read.
pub(super) fn is_past(word: &str) -> bool {
    let w = word.to_lowercase();
    let irregular = |w: &str| IRREGULAR.iter().any(|(p, _)| *p == w);
    // "retook", "overslept", "mistook": an irregular past keeps its form under a prefix.
    let prefixed = ["re", "over", "under", "mis", "out", "with", "fore"]
        .iter()
        .any(|p| w.strip_prefix(p).is_some_and(|rest| rest.len() > 2 && irregular(rest)));
    irregular(&w) || prefixed || (w.len() > 4 && w.ends_with("ed"))
}

/// Whether `word` (lower case, bare) is read as a plain present verb after "I" ("get", "need",
/// "take"): a word of letters that is no adverb, hedge or texting shorthand ("really", "kinda",
/// "n"), no form that already agrees (past, modal, "-ing") and no contraction.
fn plain_verb(word: &str) -> bool {
    const NOT_VERBS: &[&str] = &[
        "also",
        "always",
        "never",
        "still",
        "just",
        "even",
        "only",
        "kinda",
        "sorta",
        "often",
        "sometimes",
        "usually",
        "so",
        "too",
        "really",
        "actually",
        "def",
        "prob",
        "tho",
        "dunno",
        "lol",
        "and",
        "or",
        "but",
        "am",
        "was",
        "were",
        "mean",
        "think",
        "guess",
        "suppose",
        "reckon",
        "feel",
        "hope",
        "know",
        "believe",
        "bet",
        "no",
        "not",
        "now",
        "then",
        "here",
        "there",
        "the",
        "to",
        "in",
        "at",
        "on",
        "all",
        "both",
        "myself",
        "personally",
        "very",
        "pretty",
        "quite",
        "almost",
        "ever",
        "already",
        "once",
        "twice",
        "as",
        "if",
    ];
    word.len() >= 2
        && word.chars().all(|c| c.is_ascii_alphabetic())
        && !word.ends_with("ly")
        && !word.ends_with("ing")
        && !NOT_VERBS.contains(&word)
        && !PIDGIN_MARKERS.contains(&word)
        && !same_after_any_subject(word)
}

/// West African Pidgin's markers before a verb ("i don comot from uber", "i dey drive", "i wan
/// plan"): no verb to agree, so they take no -s ("User dons comot").
pub(super) const PIDGIN_MARKERS: &[&str] = &["don", "dey", "wan"];

/// The third-person singular of a base verb ("deploy" → "deploys", "fix" → "fixes").
pub(super) fn third_singular(verb: &str) -> String {
    let v = verb.to_lowercase();
    match v.as_str() {
        "have" => "has".into(),
        "be" | "are" => "is".into(),
        "were" => "was".into(),
        "do" => "does".into(),
        "go" => "goes".into(),
        // Spoken contractions take their "to" with them ("I wanna help" → "User wants to help").
        "wanna" => "wants to".into(),
        "gotta" => "has to".into(),
        "gonna" => "is going to".into(),
        // The same after any subject: "User ain't paying that".
        "aint" | "ain't" => "ain't".into(),
        _ if v.ends_with(['s', 'x', 'z']) || v.ends_with("ch") || v.ends_with("sh") => format!("{v}es"),
        _ if v.ends_with('y')
            && !v.ends_with("ay")
            && !v.ends_with("ey")
            && !v.ends_with("oy")
            && !v.ends_with("uy") =>
        {
            format!("{}ies", &v[..v.len() - 1])
        }
        _ => format!("{v}s"),
    }
}

/// Synonyms added to a matching target so "my mother" finds "call mom".
fn synonyms(word: &str) -> &'static [&'static str] {
    match word {
        "mom" | "mum" | "mother" | "mommy" | "mummy" | "mama" | "ma" => &["mom", "mum", "mother"],
        "dad" | "father" | "daddy" | "papa" | "pa" => &["dad", "father"],
        "grandma" | "grandmother" | "granny" | "nana" | "nan" | "gran" => &["grandma", "grandmother"],
        "grandpa" | "grandfather" => &["grandpa", "grandfather"],
        "doc" | "doctor" | "gp" => &["doctor"],
        "dentist" | "dentists" | "dental" => &["dentist"],
        "presentation" | "slides" | "deck" => &["slides", "presentation", "deck"],
        "taxes" | "tax" => &["tax", "taxes"],
        "flight" | "flights" | "tickets" | "ticket" => &["flight", "flights", "tickets"],
        _ => &[],
    }
}

/// The identifying words of a phrase, lower-cased, for a [`crate::op::Target::Matching`] text:
/// pronouns, articles, generic verbs and stopwords dropped, kinship synonyms added.
pub(super) fn key_words(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in s.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-' || c == '.' || c == '+' || c == '#')) {
        let w = w.trim_matches(|c: char| c == '\'' || c == '.' || c == '-').to_lowercase();
        let w = w.strip_suffix("'s").map(str::to_string).unwrap_or(w);
        if w.chars().count() < 2 || GENERIC.contains(&w.as_str()) || is_stopword(&w) {
            continue;
        }
        let syn = synonyms(&w);
        if syn.is_empty() {
            if !out.contains(&w) {
                out.push(w);
            }
        } else {
            for s in syn {
                if !out.iter().any(|o| o == s) {
                    out.push((*s).to_string());
                }
            }
        }
    }
    out
}

/// Normalises a relation word to its key form ("mum" → "mother", "best friend" → "best_friend").
pub(super) fn relation_key(rel: &str) -> String {
    let r = tidy(&relation_in_full(&rel.to_lowercase()));
    match r.as_str() {
        "mom" | "mum" | "mommy" | "mummy" | "mama" | "mother" => "mother".into(),
        "dad" | "daddy" | "papa" | "father" => "father".into(),
        "fiancé" | "fiance" | "fiancée" | "fiancee" => "fiance".into(),
        "grandma" | "granny" | "nana" | "nan" | "gran" | "grandmother" => "grandmother".into(),
        "grandpa" | "grandfather" => "grandfather".into(),
        "kid" | "child" => "child".into(),
        "bff" | "best friend" => "best_friend".into(),
        "auntie" => "aunt".into(),
        "co-worker" => "coworker".into(),
        other => other.replace(' ', "_"),
    }
}

/// Relations a person has one of at a time: keyed by relation alone, so a new one supersedes.
pub(super) fn is_unique_relation(key: &str) -> bool {
    matches!(
        key,
        "wife"
            | "husband"
            | "spouse"
            | "partner"
            | "boyfriend"
            | "girlfriend"
            | "fiance"
            | "mother"
            | "father"
            | "boss"
    )
}

/// Normalises a species word to its key form ("puppy" → "dog", "kitties" → "cat").
pub(super) fn species_key(s: &str) -> String {
    let s = tidy(&s.to_lowercase());
    match s.as_str() {
        "dog" | "dogs" | "puppy" | "puppies" | "pup" => "dog".into(),
        b if is_breed(b, &["tabby", "siamese", "persian", "maine coon", "ragdoll", "sphynx", "bengal", "calico"]) => {
            "cat".into()
        }
        b if is_breed(b, &[]) => "dog".into(),
        "cat" | "cats" | "kitten" | "kittens" | "kitty" => "cat".into(),
        "rabbit" | "rabbits" | "bunny" => "rabbit".into(),
        "mice" | "mouse" => "mouse".into(),
        "pony" | "ponies" => "pony".into(),
        "fish" | "goldfish" => "fish".into(),
        other => other.trim_end_matches('s').replace(' ', "_"),
    }
}

/// Whether a word names a pet (a species or a breed: "puppy", "golden retriever").
pub(super) fn is_pet_word(w: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(&format!("(?i)^(?:{SPECIES}|{BREEDS})$")).expect("pet regex")).is_match(w.trim())
}

/// Modals and auxiliaries after "I" that keep their form in the third person.
pub(super) const MODALS: &[&str] =
    &["can", "could", "did", "had", "may", "might", "must", "should", "was", "will", "would"];

/// A word as the word lists hold it: lower case, without the punctuation around it (an
/// apostrophe inside stays: "don't", "Carol's").
pub(super) fn bare(w: &str) -> String {
    w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'').to_lowercase()
}

/// Whether a verb reads the same after "I" and after "User" ("went", "can", "loved",
/// "didn't"): a past form, a modal or a negated auxiliary other than "don't" and "haven't".
pub(super) fn same_after_any_subject(b: &str) -> bool {
    // "used to", "loved": a form in -ed is past whatever `is_past` knows of it ("need", "feed"
    // and "succeed" are not).
    let past_ed = b.len() > 3 && b.ends_with("ed") && !b.ends_with("eed");
    // "would've", "must've": a modal with its "have" run on.
    let modal_have = b.strip_suffix("'ve").is_some_and(|m| MODALS.contains(&m));
    // "cannot" is "can" and "not" run together ("I cannot penicillin" stays "cannot").
    (is_past(b) || MODALS.contains(&b) || b.ends_with("n't") || b == "cannot" || past_ed || modal_have)
        && !matches!(b, "don't" | "haven't")
}

/// A relative as texting names them ("sis", "hubby"), written out ("sister", "husband") with
/// the punctuation around it kept: the memory is read by a model and a person, and the relation
/// rules know the full word.
pub(super) fn relation_in_full(word: &str) -> String {
    let b = bare(word);
    let full = match b.as_str() {
        "sis" => "sister",
        "bro" => "brother",
        "cuz" | "cuzzie" => "cousin",
        "hubby" => "husband",
        "missus" | "missis" | "wifey" => "wife",
        "bf" => "boyfriend",
        "gf" => "girlfriend",
        _ => return word.to_string(),
    };
    match word.to_lowercase().find(b.as_str()) {
        Some(i) => format!("{}{full}{}", &word[..i], &word[i + b.len()..]),
        None => word.to_string(),
    }
}

/// Whether "me" before `next` is "my", as British, Irish and Caribbean speech has it ("me ma
/// helped", "come up in me hands", "passed me own gas safe"): before a relation, a part of
/// the body ("back" left out: "put me back on days"), "own" or a thing that is someone's own;
/// or opening the sentence (`first`) before anything but "and", "too" and the like ("Me and
/// Jo went", "me too").
pub(super) fn me_is_my(next: Option<&str>, first: bool) -> bool {
    let Some(next) = next.map(|n| n.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase()) else {
        return false;
    };
    const OWN: &[&str] = &[
        "own",
        "mates",
        "mate",
        "boss",
        "manager",
        "missus",
        "fella",
        "bloods",
        "meds",
        "tablets",
        "rota",
        "shifts",
        "wages",
        "head",
        "hands",
        "hand",
        "knees",
        "knee",
        "feet",
        "foot",
        "legs",
        "leg",
        "arm",
        "arms",
        "eyes",
        "chest",
        "belly",
        "hip",
        "hips",
        "neck",
        "shoulder",
        "teeth",
        "hair",
        "gran",
        "nan",
        "nana",
        "ma",
        "mam",
        "da",
        "lad",
        "lads",
        "girl",
        "girls",
        "kids",
        "bairns",
        "weans",
        "fam",
        "skin",
        "face",
        "ears",
        "nose",
        "stomach",
        "tummy",
        "throat",
        "wrist",
        "ankle",
        "elbow",
        "fingers",
        "toes",
        "bones",
        "joints",
        "lungs",
        "mouth",
        "notes",
        "records",
        "kidneys",
        "liver",
        "phone",
        "car",
        "van",
        "telly",
        "garden",
        "birthday",
        "cholesterol",
        "blood",
        "pressure",
        "sugar",
        "sugars",
        "heart",
        "asthma",
        "inhaler",
        "pills",
        "insulin",
        "snap",
        "suit",
        "shoes",
        "bike",
        "house",
        "room",
        "wedding",
        "weddin",
        "passport",
        "licence",
        "license",
    ];
    if next.is_empty()
        || [
            "and",
            "n",
            "an",
            "&",
            "too",
            "neither",
            "either",
            "myself",
            "personally",
            "included",
            "as",
            "or",
            // "text me cuz I'll forget": because, not a cousin.
            "cuz",
            "coz",
            "i",
            "i'm",
            "you",
            "he",
            "she",
            "we",
            "they",
            "it",
        ]
        .contains(&next.as_str())
    {
        return false;
    }
    OWN.contains(&next.as_str())
        || is_relation_word(&next)
        || (first && !next.ends_with("ed") && !same_after_any_subject(&next))
}

/// Whether a word names a relation ("sister", "best friend").
pub(super) fn is_relation_word(w: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(&format!("(?i)^(?:{RELATIONS})$")).expect("relation regex")).is_match(w.trim())
}

fn is_breed(word: &str, among: &[&str]) -> bool {
    let w = word.trim_end_matches('s');
    if among.is_empty() { BREEDS.split('|').any(|b| b.trim().replace("\\s+", " ") == w) } else { among.contains(&w) }
}

/// The singular of a species word for content ("cats" → "cat"); plural forms stay for counts.
pub(super) fn species_singular(s: &str) -> String {
    let s = tidy(&s.to_lowercase());
    match s.as_str() {
        "puppies" => "puppy".into(),
        "ponies" => "pony".into(),
        "mice" => "mouse".into(),
        "fish" | "goldfish" => s,
        other if other.ends_with('s') => other[..other.len() - 1].to_string(),
        other => other.to_string(),
    }
}

/// Capitalised words that are not names (sentence starts, days, common nouns).
pub(super) const NOT_NAMES: &[&str] = &[
    "a",
    "about",
    "actually",
    "afraid",
    "african",
    "agnostic",
    "all",
    "allergic",
    "almost",
    "also",
    "always",
    "american",
    "an",
    "argentinian",
    "asian",
    "asking",
    "at",
    "atheist",
    "australian",
    "austrian",
    "autistic",
    "aware",
    "back",
    "bangladeshi",
    "based",
    "basically",
    "belgian",
    "bi",
    "blind",
    "bored",
    "brazilian",
    "british",
    "buddhist",
    "building",
    "bulgarian",
    "busy",
    "canadian",
    "catholic",
    "chilean",
    "chinese",
    "christian",
    "colombian",
    "coming",
    "confused",
    "curious",
    "currently",
    "czech",
    "danish",
    "deaf",
    "definitely",
    "divorced",
    "doing",
    "done",
    "dr",
    "dutch",
    "dyslexic",
    "early",
    "egyptian",
    "english",
    "english-speaking",
    "ethiopian",
    "european",
    "even",
    "excited",
    "feeling",
    "female",
    "filipino",
    "fine",
    "finnish",
    "free",
    "french",
    "friday",
    "from",
    "gay",
    "gen",
    "german",
    "getting",
    "ghanaian",
    "glad",
    "god",
    "going",
    "good",
    "great",
    "greek",
    "happy",
    "heading",
    "heaven",
    "her",
    "here",
    "hindu",
    "his",
    "hispanic",
    "home",
    "honestly",
    "hoping",
    "hungarian",
    "hungry",
    "i",
    "icelandic",
    "in",
    "indian",
    "indonesian",
    "interested",
    "iranian",
    "iraqi",
    "irish",
    "israeli",
    "it",
    "italian",
    "japanese",
    "jewish",
    "just",
    "kenyan",
    "kinda",
    "korean",
    "late",
    "latina",
    "latino",
    "learning",
    "leaving",
    "left",
    "less",
    "like",
    "literally",
    "living",
    "looking",
    "lord",
    "making",
    "malaysian",
    "male",
    "married",
    "maybe",
    "mexican",
    "monday",
    "more",
    "mormon",
    "moroccan",
    "moving",
    "mr",
    "mrs",
    "ms",
    "muslim",
    "neurodivergent",
    "never",
    "new",
    "nigerian",
    "nonbinary",
    "norwegian",
    "not",
    "now",
    "off",
    "ok",
    "okay",
    "on",
    "one",
    "only",
    "originally",
    "out",
    "pakistani",
    "peruvian",
    "planning",
    "polish",
    "portuguese",
    "pregnant",
    "pretty",
    "probably",
    "protestant",
    "queer",
    "quite",
    "reading",
    "ready",
    "really",
    "retired",
    "right",
    "romanian",
    "running",
    "russian",
    "saturday",
    "saying",
    "scottish",
    "sikh",
    "single",
    "sir",
    "slovak",
    "so",
    "somewhat",
    "sorry",
    "spanish",
    "staying",
    "still",
    "straight",
    "stuck",
    "sunday",
    "super",
    "sure",
    "swedish",
    "swiss",
    "team",
    "telling",
    "thai",
    "that",
    "the",
    "there",
    "thinking",
    "this",
    "three",
    "thursday",
    "tired",
    "totally",
    "trans",
    "trying",
    "tuesday",
    "turkish",
    "two",
    "ukrainian",
    "unemployed",
    "using",
    "vegan",
    "vegetarian",
    "very",
    "vietnamese",
    "wednesday",
    "welsh",
    "what",
    "who",
    "with",
    "wondering",
    "working",
    "writing",
    "you",
    "your",
];

/// Words that look like names at the start of "I'm X" but are not names.
pub(super) fn is_not_a_name(w: &str) -> bool {
    let w = w.to_lowercase();
    // "I'm Going", "I'm Trying": a gerund is no name ("Lily", "Ned" and "Mohammed" are).
    NOT_NAMES.contains(&w.as_str()) || (w.ends_with("ing") && w.len() >= 6)
}

#[cfg(test)]
mod tests {

    #[test]
    fn me_before_what_is_ones_own_is_my() {
        assert_eq!(third_person("on simvastatin 20 for me cholesterol"), "on simvastatin 20 for their cholesterol");
        assert_eq!(third_person("she gave me the keys"), "she gave them the keys");
    }

    #[test]
    fn an_irregular_past_under_a_prefix_is_past() {
        for w in ["retook", "overslept", "mistook", "took"] {
            assert!(is_past(w), "{w}");
        }
        for w in ["react", "retake", "outdo", "rebut"] {
            assert!(!is_past(w), "{w}");
        }
    }

    #[test]
    fn closing_particles_are_no_part_of_the_sentence() {
        use super::without_closing_particles as w;
        assert_eq!(w("i'm moving to leeds next month innit"), "i'm moving to leeds next month");
        assert_eq!(w("im starting at tesco monday abeg!"), "im starting at tesco monday");
        assert_eq!(w("my knee op is on the 3rd lol, ngl"), "my knee op is on the 3rd");
        assert_eq!(w("allergic to penicillin bro hahaha"), "allergic to penicillin");
        assert_eq!(w("i got us to blackpool in one piece didnt i"), "i got us to blackpool in one piece");
        assert_eq!(w("I did well, didn't I!"), "I did well");
        // A tag question, a person after a possessive, and a sentence of particles stay.
        assert_eq!(w("you're coming innit?"), "you're coming innit?");
        assert_eq!(w("going out with my bro"), "going out with my bro");
        assert_eq!(w("lol"), "lol");
        assert_eq!(w("My dog is called Mo."), "My dog is called Mo.");
    }

    #[test]
    fn aint_is_the_same_after_any_subject() {
        assert_eq!(super::third_singular("aint"), "ain't");
        assert_eq!(super::third_singular("ain't"), "ain't");
        assert_eq!(super::third_singular("fix"), "fixes");
    }

    #[test]
    fn a_weekday_closing_a_phrase_is_when_unless_it_ends_a_span() {
        assert_eq!(super::strip_times("tesco monday"), "tesco");
        assert_eq!(super::strip_times("the co-op monday to friday"), "the co-op monday to friday");
        assert_eq!(super::strip_times("the shop, Saturday"), "the shop");
        assert_eq!(super::strip_times("Greggs"), "Greggs");
        assert_eq!(super::strip_times("a project officer on 1 june"), "a project officer");
        assert_eq!(super::strip_times("the deli on May Street"), "the deli on May Street");
    }

    #[test]
    fn a_modal_run_on_with_not_keeps_its_form_after_any_subject() {
        for w in ["cannot", "can't", "must", "would've"] {
            assert!(super::same_after_any_subject(w), "{w}");
        }
        assert!(!super::same_after_any_subject("take"));
    }

    /// Every word table of the rule families: sorted, so a word is found and added in one
    /// place, and without repeats. A table whose order decided what matches would need a
    /// comment saying so; none does (their lookups are membership, or first-prefix over words
    /// of which no one is a prefix of another in a way sorting reorders).
    #[test]
    fn word_tables_are_sorted_without_repeats() {
        let tables: &[(&str, &[&str])] = &[
            ("boundary::FILLERS", super::super::boundary::FILLERS),
            ("boundary::QUALIFIERS", super::super::boundary::QUALIFIERS),
            ("correction::NOT_VALUES", super::super::correction::NOT_VALUES),
            ("episodic::LEADS", super::super::episodic::LEADS),
            ("episodic::MULTI_LEADS", super::super::episodic::MULTI_LEADS),
            ("episodic::ENDEARMENTS", super::super::episodic::ENDEARMENTS),
            ("episodic::ADVERBS", super::super::episodic::ADVERBS),
            ("episodic::REACTIONS", super::super::episodic::REACTIONS),
            ("episodic::GERUND_SUBJECT_VERBS", super::super::episodic::GERUND_SUBJECT_VERBS),
            ("episodic::NEGATIONS", super::super::episodic::NEGATIONS),
            ("episodic::REQUESTS", super::super::episodic::REQUESTS),
            ("episodic::HARD_REACTIONS", super::super::episodic::HARD_REACTIONS),
            ("episodic::LIKINGS", super::super::episodic::LIKINGS),
            ("episodic::FEELINGS", super::super::episodic::FEELINGS),
            ("episodic::STATES_BEFORE", super::super::episodic::STATES_BEFORE),
            ("lex::MODALS", super::MODALS),
            ("readable::ELIDED_IT", super::super::readable::ELIDED_IT),
            ("episodic::NOT_ELIDED", super::super::episodic::NOT_ELIDED),
            ("episodic::FILLERS", super::super::episodic::FILLERS),
            ("fact::SECRET_IDS", super::super::fact::SECRET_IDS),
            ("identity::GREETINGS", super::super::identity::GREETINGS),
            ("identity::NOT_PLACES", super::super::identity::NOT_PLACES),
            ("identity::NOT_HERE", super::super::identity::NOT_HERE),
            ("identity::JUDGED", super::super::identity::JUDGED),
            ("identity::PAST", super::super::identity::PAST),
            ("identity::HOBBY", super::super::identity::HOBBY),
            ("identity::FIELDS", super::super::identity::FIELDS),
            ("identity::ORGS", super::super::identity::ORGS),
            ("lex::NOT_DONE", super::NOT_DONE),
            ("lex::GENERIC", super::GENERIC),
            ("lex::NAME_LIKE", super::NAME_LIKE),
            ("lex::NOT_NAMES", super::NOT_NAMES),
            ("lex::TRAILING_PARTICLES", super::TRAILING_PARTICLES),
            ("shape::WEEKDAY_NAMES", crate::shape::WEEKDAY_NAMES),
            ("lex::TAG_AUXILIARIES", super::TAG_AUXILIARIES),
            ("lore::NOT", super::super::lore::NOT),
            ("lore::NAMED", super::super::lore::NAMED),
            ("mood::STARTS", super::super::mood::STARTS),
            ("plan::NOT_TASKS", super::super::plan::NOT_TASKS),
            ("plan::NEED_MORE", super::super::plan::NEED_MORE),
            ("plan::LEAD", super::super::plan::LEAD),
            ("plan::TASK_VERBS", super::super::plan::TASK_VERBS),
            ("plan::GENERIC_TASKS", super::super::plan::GENERIC_TASKS),
            ("plan::STATES", super::super::plan::STATES),
            ("resolution::TASK_VERBS", super::super::resolution::TASK_VERBS),
            ("resolution::GENERIC_VERBS", super::super::resolution::GENERIC_VERBS),
            ("resolution::WITH_PREP", super::super::resolution::WITH_PREP),
            ("rule::LEADS", super::super::rule::LEADS),
            ("style::LENGTH", super::super::style::LENGTH),
            ("tool::AMBIGUOUS", super::super::tool::AMBIGUOUS),
            ("tool::HARDWARE", super::super::tool::HARDWARE),
        ];
        for (name, table) in tables {
            for pair in table.windows(2) {
                assert!(
                    pair[0] < pair[1],
                    "{name}: {:?} before {:?} (keep it sorted, without repeats)",
                    pair[0],
                    pair[1]
                );
            }
        }
        let keys: Vec<&str> = super::IRREGULAR.iter().map(|(past, _)| *past).collect();
        assert!(keys.windows(2).all(|p| p[0] < p[1]), "IRREGULAR: sorted by the past form, each once");
    }

    /// The top-level alternatives of a pattern table.
    fn alternatives(table: &str) -> Vec<String> {
        let (mut out, mut depth, mut cur) = (Vec::new(), 0, String::new());
        for c in table.chars().filter(|c| !c.is_whitespace()) {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                '|' if depth == 0 => {
                    out.push(std::mem::take(&mut cur));
                    continue;
                }
                _ => {}
            }
            cur.push(c);
        }
        out.push(cur);
        out
    }

    /// The pattern tables are alternations, where order decides (the first alternative that
    /// fits wins), so they are not sorted: each alternative appears once, and a longer form
    /// comes before the shorter one it extends ("wiped out" before "wiped"), save the two
    /// listed, which are findings: the longer form there can never be what matched.
    #[test]
    fn pattern_tables_have_no_repeats_and_longer_forms_first() {
        let known_shadowed = [("down", r"down\s+in\s+the\s+dumps"), ("therapy", r"therapy\s+session")];
        for (name, table) in [
            ("RELATIONS", super::RELATIONS),
            ("SPECIES", super::SPECIES),
            ("BREEDS", super::BREEDS),
            ("MOODS", super::MOODS),
            ("LANGUAGES", super::LANGUAGES),
            ("JOBS", super::JOBS),
            ("EVENTS", super::EVENTS),
        ] {
            let alts = alternatives(table);
            for (i, a) in alts.iter().enumerate() {
                assert!(!alts[..i].contains(a), "{name}: {a} twice");
                for b in &alts[i + 1..] {
                    let shadowed = b.starts_with(&format!("{a}\\s+"));
                    if shadowed && !known_shadowed.contains(&(a.as_str(), b.as_str())) {
                        panic!("{name}: {b} comes after {a}, which always wins first");
                    }
                }
            }
        }
    }
    use super::*;

    #[test]
    fn third_person_rewrites_and_keeps_kinship_names() {
        assert_eq!(third_person("call my mom this weekend"), "call mom this weekend");
        // "me" for "my" before a part of the body ("for me skin").
        assert_eq!(third_person("roaccutane for me skin"), "roaccutane for their skin");
        assert_eq!(third_person("send my slides to my boss"), "send their slides to their boss");
        assert_eq!(third_person("I am sure I was right"), "they are sure they were right");
        assert_eq!(
            third_person("the blue one is mine and I work at a mine"),
            "the blue one is theirs and they work at a mine"
        );
        assert_eq!(
            third_person_naming_user("should ask occ health, she said my BP is up and wants to see me", false),
            "should ask occ health, she said User's BP is up and wants to see User"
        );
        assert_eq!(third_person_naming_user("i sent them the email", false), "User sent them the email");
        // After someone else the user is named, a plain verb agreeing; one that reads alike
        // needs no agreement.
        assert_eq!(third_person_naming_user("she said I need rest", false), "she said User needs rest");
        assert_eq!(
            third_person_naming_user("is getting married in June and I am the bridesmaid", true),
            "is getting married in June and User is the bridesmaid"
        );
        assert_eq!(
            third_person_naming_user("wants a cruise but I get seasick, badly", true),
            "wants a cruise but User gets seasick, badly"
        );
        // An adverb or a hedge after "I": "they", as before.
        assert_eq!(third_person_naming_user("she said I really need rest", false), "she said they really need rest");
        assert_eq!(third_person_naming_user("she thinks I think too much", false), "she thinks they think too much");
        assert_eq!(third_person_naming_user("she said I no longer need it", false), "she said they no longer need it");
        assert_eq!(third_person_naming_user("she said I didn't rest", false), "she said User didn't rest");
        assert_eq!(third_person_naming_user("so I take the bus", true), "so User takes the bus");
        assert_eq!(
            third_person_naming_user("has me on statins, to call my mum", true),
            "has User on statins, to call mum"
        );
        // No one else since the user: "their" reads as the user's.
        assert_eq!(
            third_person_naming_user("is slow, my eyes aren't what they were", false),
            "is slow, their eyes aren't what they were"
        );
        assert_eq!(
            third_person_naming_user("had it on my shelf for a year", false),
            "had it on their shelf for a year"
        );
        assert_eq!(
            third_person_naming_user("in September with my friend Aoife", false),
            "in September with their friend Aoife"
        );
        assert_eq!(
            third_person_naming_user("on the Hendricks account because Sam said I was covering", false),
            "on the Hendricks account because Sam said User was covering"
        );
        assert_eq!(third_person("and wow, was I blown away"), "and wow, were they blown away");
        assert_eq!(third_person("Am I late"), "Are they late");
        assert_eq!(third_person("visit our parents with me"), "visit their parents with them");
    }

    #[test]
    fn heads_stop_at_clause_breaks() {
        assert_eq!(head("hiking in the mountains, but not in winter"), "hiking in the mountains");
        assert_eq!(head("Lisbon now"), "Lisbon");
        assert_eq!(head("Lisbon nowadays"), "Lisbon");
        assert_eq!(head("hiking so much"), "hiking");
        assert_eq!(head("the nowhere band"), "the nowhere band");
        assert_eq!(head("C++ and Rust"), "C++ and Rust");
        // A comma between two words describing one noun is no break.
        assert_eq!(
            head("building a warm, welcoming club for new runners"),
            "building a warm, welcoming club for new runners"
        );
        assert_eq!(head("a cuppa, it sorts me out"), "a cuppa");
        assert_eq!(head("a long walk, especially by the sea"), "a long walk");
    }

    #[test]
    fn past_tense_to_base() {
        for (p, b) in [
            ("called", "call"),
            ("sent", "send"),
            ("finished", "finish"),
            ("booked", "book"),
            ("submitted", "submit"),
            ("planned", "plan"),
            ("replied", "reply"),
            ("scheduled", "schedule"),
            ("passed", "pass"),
            ("emailed", "email"),
        ] {
            assert_eq!(base_verb(p), b);
        }
        assert!(is_past("called") && is_past("sent") && !is_past("need") && !is_past("red"));
    }

    #[test]
    fn key_words_drop_the_generic_and_add_kin() {
        assert_eq!(key_words("I live in Lisbon"), vec!["lisbon"]);
        assert_eq!(key_words("my mother"), vec!["mom", "mum", "mother"]);
        assert_eq!(key_words("that coffee shop"), vec!["coffee", "shop"]);
        assert!(key_words("it").is_empty());
    }

    #[test]
    fn verbs_and_articles() {
        assert_eq!(third_singular("deploy"), "deploys");
        assert_eq!(third_singular("buy"), "buys");
        assert_eq!((ing("open"), ing("stop"), ing("visit")), ("opening".into(), "stopping".into(), "visiting".into()));
        for (texted, full) in [("movin", "moving"), ("lookin'", "looking"), ("gettin", "getting"), ("buyin", "buying")]
        {
            assert_eq!(dropped_g(texted).as_deref(), Some(full), "{texted}");
        }
        for word in ["cousin", "robin", "begin", "within", "basin", "violin", "in"] {
            assert_eq!(dropped_g(word), None, "{word}");
        }
        assert_eq!(third_singular("fix"), "fixes");
        assert_eq!(third_singular("carry"), "carries");
        assert_eq!(article("interview"), "an");
        assert_eq!(article("dentist appointment"), "a");
        assert_eq!(species_key("puppies"), "dog");
        assert_eq!(relation_key("Mum"), "mother");
    }
}
