//! Word lists and small text helpers shared by the rule families.
//!
//! Kept in one place so a rule's regular expression and the code reading its captures agree on
//! what a "relation", a "mood" or a "tool" is.

use std::sync::OnceLock;

use regex::Regex;

use crate::text::{is_stopword, tidy};

/// Pattern placeholders, expanded by [`expand`] before a rule is compiled.
const PLACEHOLDERS: &[(&str, &str)] = &[
    ("<IM>", r"i(?:'m|\s+am)"),
    ("<IVE>", r"i(?:'ve|\s+have)"),
    ("<ID>", r"i(?:'d|\s+would)"),
    ("<DONT>", r"(?:don't|do\s+not|dont)"),
    (
        "<ADV>",
        r"(?:(?:really|absolutely|truly|genuinely|totally|just|also|still|do|kinda|kind\s+of|sort\s+of|especially|particularly|actually|honestly|definitely|seriously|now|currently|mostly|mainly|always|usually|generally|pretty\s+much|so|very\s+much)\s+)*",
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
        r"(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?\s+\d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:january|february|march|april|may|june|july|august|september|october|november|december)",
    ),
];

/// Family and close relations ("my sister", "my boss"); the longest forms first.
pub(super) const RELATIONS: &str = "mother-in-law|father-in-law|sister-in-law|brother-in-law|in-laws|\
    stepmom|stepmother|stepdad|stepfather|stepson|stepdaughter|stepbrother|stepsister|\
    wife|husband|spouse|partner|boyfriend|girlfriend|fiancée|fiancee|fiancé|fiance|ex-wife|ex-husband|\
    sons|son|daughters|daughter|kids|kid|children|child|baby|toddler|twins|\
    mom|mum|mother|mommy|mummy|mama|dad|father|daddy|papa|parents|\
    sisters|sister|brothers|brother|siblings|sibling|twin|\
    grandma|grandmother|granny|nana|grandpa|grandfather|grandparents|grandson|granddaughter|grandkids|grandchildren|\
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
    sick|ill|unwell|hungover|jet[- ]?lagged|sore|in\\s+pain|\
    happy|excited|thrilled|pumped|stoked|ecstatic|elated|proud|relieved|grateful|thankful|\
    calm|relaxed|motivated|energi[sz]ed|optimistic|hopeful|confused|stuck|discouraged|defeated|\
    restless|distracted|unmotivated|demotivated|on\\s+edge|a\\s+mess|a\\s+wreck|under\\s+the\\s+weather|\
    swamped|slammed|buried|fried|frazzled|shattered|sluggish|bummed|gutted|crushed|hyped|psyched|buzzing|chuffed|\
    giddy|peeved|salty|flat|blah|meh|out\\s+of\\s+it|down\\s+in\\s+the\\s+dumps|on\\s+top\\s+of\\s+the\\s+world|\
    over\\s+the\\s+moon|heartbroken|lonely|nostalgic|emotional|sentimental|irritable|tense|jittery|antsy|off";

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
    machinist|technologist|hygienist|surveyor|inspector|dispatcher|courier|\
    ux\\s+designer|ui\\s+designer|game\\s+developer|web\\s+developer|stay-at-home\\s+(?:mom|dad|parent)";

/// Things people plan, book or attend; with a date they are open loops.
pub(super) const EVENTS: &str = "job\\s+interview|interview|exam|final|finals|midterm|test|quiz|appointment|\
    meeting|presentation|talk|demo|pitch|flight|deadline|surgery|operation|procedure|check-?up|checkup|\
    date|wedding|party|birthday\\s+party|trip|vacation|holiday|conference|call|standup|review|\
    performance\\s+review|1:1|one-on-one|recital|concert|gig|show|game|match|race|marathon|\
    tournament|audition|hearing|court\\s+date|visit|dinner|lunch|brunch|reservation|session|class|lecture|\
    workshop|seminar|webinar|shift|defen[cs]e|viva|move|launch|release|deploy|deployment|play|school\\s+play|\
    graduation|ceremony|funeral|baby\\s+shower|shower|reunion|retreat|camp|tryouts?|orientation|training|assessment|\
    check-in|recital|exhibition|opening|premiere|closing|appraisal|inspection|consultation|therapy|\
    ultrasound|scan|therapy\\s+session|dentist\\s+appointment|doctor'?s\\s+appointment|haircut";

/// Past-tense forms that are not just "-ed" added to the base, with their base.
const IRREGULAR: &[(&str, &str)] = &[
    ("went", "go"),
    ("sent", "send"),
    ("met", "meet"),
    ("wrote", "write"),
    ("bought", "buy"),
    ("paid", "pay"),
    ("took", "take"),
    ("gave", "give"),
    ("made", "make"),
    ("did", "do"),
    ("got", "get"),
    ("spoke", "speak"),
    ("told", "tell"),
    ("saw", "see"),
    ("ran", "run"),
    ("drove", "drive"),
    ("flew", "fly"),
    ("rang", "ring"),
    ("built", "build"),
    ("sold", "sell"),
    ("had", "have"),
    ("brought", "bring"),
    ("found", "find"),
    ("won", "win"),
    ("left", "leave"),
    ("put", "put"),
    ("read", "read"),
    ("wrapped", "wrap"),
    ("did", "do"),
    ("began", "begin"),
    ("chose", "choose"),
    ("held", "hold"),
    ("kept", "keep"),
    ("lent", "lend"),
    ("rode", "ride"),
    ("swam", "swim"),
    ("threw", "throw"),
    ("taught", "teach"),
    ("caught", "catch"),
    ("fed", "feed"),
    ("hung", "hang"),
    ("set", "set"),
    ("shut", "shut"),
    ("sang", "sing"),
    ("wore", "wear"),
    ("woke", "wake"),
    ("drew", "draw"),
    ("spent", "spend"),
    ("sorted", "sort"),
    ("scheduled", "schedule"),
    ("completed", "complete"),
    ("updated", "update"),
    ("submitted", "submit"),
    ("emailed", "email"),
    ("texted", "text"),
    ("messaged", "message"),
    ("renewed", "renew"),
    ("replied", "reply"),
    ("applied", "apply"),
    ("tidied", "tidy"),
    ("studied", "study"),
    ("prepared", "prepare"),
    ("practiced", "practice"),
    ("practised", "practise"),
    ("filed", "file"),
    ("signed", "sign"),
    ("registered", "register"),
    ("cancelled", "cancel"),
    ("canceled", "cancel"),
    ("planned", "plan"),
    ("shipped", "ship"),
    ("dropped", "drop"),
    ("stopped", "stop"),
    ("mopped", "mop"),
    ("baked", "bake"),
    ("changed", "change"),
    ("organized", "organize"),
    ("organised", "organise"),
    ("finalized", "finalize"),
    ("finalised", "finalise"),
    ("closed", "close"),
    ("released", "release"),
    ("purchased", "purchase"),
    ("arranged", "arrange"),
    ("confirmed", "confirm"),
    ("received", "receive"),
    ("returned", "return"),
    ("phoned", "phone"),
    ("hired", "hire"),
    ("recorded", "record"),
    ("uploaded", "upload"),
    ("published", "publish"),
    ("shared", "share"),
    ("declined", "decline"),
    ("resolved", "resolve"),
    ("solved", "solve"),
    ("moved", "move"),
    ("raked", "rake"),
    ("vacuumed", "vacuum"),
    ("invited", "invite"),
    ("wired", "wire"),
    ("paid off", "pay off"),
    ("felt", "feel"),
    ("lost", "lose"),
    ("thought", "think"),
    ("knew", "know"),
    ("heard", "hear"),
    ("came", "come"),
    ("became", "become"),
    ("ate", "eat"),
    ("drank", "drink"),
    ("grew", "grow"),
    ("forgot", "forget"),
    ("said", "say"),
    ("sat", "sit"),
    ("stood", "stand"),
    ("slept", "sleep"),
    ("fell", "fall"),
    ("broke", "break"),
    ("meant", "mean"),
    ("understood", "understand"),
    ("fought", "fight"),
    ("led", "lead"),
    ("tore", "tear"),
    ("stole", "steal"),
];

/// Verbs whose past tense says nothing was completed ("I tried to", "I wanted to").
pub(super) const NOT_DONE: &[&str] = &[
    "tried",
    "wanted",
    "needed",
    "planned",
    "hoped",
    "decided",
    "started",
    "used",
    "liked",
    "loved",
    "hated",
    "enjoyed",
    "seemed",
    "learned",
    "learnt",
    "realized",
    "realised",
    "noticed",
    "guessed",
    "supposed",
    "missed",
    "forgot",
    "thought",
    "felt",
    "meant",
    "intended",
    "promised",
    "agreed",
    "offered",
    "expected",
    "wondered",
    "considered",
    "had",
    "was",
    "were",
    "said",
    "heard",
    "worried",
    "feared",
    "assumed",
    "believed",
    "imagined",
    "dreamed",
    "dreamt",
    "preferred",
    "lived",
    "worked",
    "moved",
    "switched",
    "joined",
    "grew",
    "named",
    "married",
    "divorced",
    "adopted",
    "turned",
    "mentioned",
    "described",
    "remembered",
    "managed",
    "ended",
    "kept",
    "spent",
    "stayed",
    "waited",
    "watched",
    "played",
    "looked",
    "noted",
    "left",
    "quit",
    "stopped",
    "relocated",
    "retired",
    "wished",
    "reckoned",
    "figured",
    "appeared",
    "happened",
    "opened",
    "allowed",
    "owned",
    "added",
    "included",
    "involved",
    "required",
];

/// Words that identify nothing on their own: stripped from matching targets.
const GENERIC: &[&str] = &[
    "i",
    "i'm",
    "i've",
    "i'd",
    "i'll",
    "me",
    "my",
    "mine",
    "myself",
    "we",
    "our",
    "us",
    "their",
    "they",
    "them",
    "the",
    "a",
    "an",
    "that",
    "this",
    "those",
    "these",
    "it",
    "its",
    "some",
    "any",
    "all",
    "about",
    "thing",
    "things",
    "stuff",
    "bit",
    "part",
    "what",
    "said",
    "say",
    "told",
    "tell",
    "mentioned",
    "mention",
    "know",
    "knew",
    "live",
    "lives",
    "living",
    "work",
    "works",
    "working",
    "use",
    "uses",
    "using",
    "like",
    "likes",
    "love",
    "loves",
    "have",
    "has",
    "had",
    "be",
    "is",
    "am",
    "are",
    "was",
    "were",
    "been",
    "do",
    "does",
    "did",
    "go",
    "goes",
    "anymore",
    "longer",
    "more",
    "now",
    "still",
    "really",
    "just",
    "actually",
    "please",
    "also",
    "again",
    "ever",
    "fact",
    "memory",
    "info",
    "information",
    "note",
    "notes",
    "details",
    "everything",
    "anything",
    "you",
    "your",
    "from",
    "with",
    "at",
    "in",
    "on",
    "for",
    "to",
    "of",
    "and",
    "or",
    "not",
    "no",
    "don't",
    "eat",
    "drink",
    "play",
    "plays",
    "playing",
    "enjoy",
    "enjoys",
    "prefer",
    "prefers",
    "hate",
    "hates",
    "want",
    "wants",
    "name",
    "names",
    "same",
    "pretty",
    "well",
    "lot",
    "lots",
    "something",
    "amazing",
    "awesome",
    "great",
    "good",
    "hang",
    "fun",
    "time",
    "way",
    "much",
    "few",
    "recently",
    "lately",
    "new",
    "old",
    "other",
    "own",
    "whole",
    "really",
    "nice",
    "cool",
    "before",
    "ago",
    "since",
    "last",
    "next",
    "week",
    "weeks",
    "day",
    "days",
    "year",
    "years",
    "month",
    "months",
    "tonight",
    "today",
    "yesterday",
    "tomorrow",
    "weekend",
    "hour",
    "hours",
    "minute",
    "minutes",
    "while",
    "ages",
];

/// Kinship words that read as names ("call mom"): no possessive in stored content.
const NAME_LIKE: &[&str] =
    &["mom", "mum", "mommy", "mummy", "mama", "dad", "daddy", "papa", "grandma", "grandpa", "granny", "nana", "nan"];

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

/// Rewrites first-person words so stored content reads about the user, not as the user.
///
/// Kinship words used as names keep no possessive ("call my mom" becomes "call mom"), so the
/// content holds the words a later "called mom" will be matched on.
pub(super) fn third_person(s: &str) -> String {
    let words: Vec<&str> = s.split(' ').filter(|w| !w.is_empty()).collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        let lower = w.to_lowercase();
        let next = words.get(i + 1).map(|n| n.to_lowercase().trim_matches(|c: char| !c.is_alphanumeric()).to_string());
        let r = match lower.as_str() {
            "my" | "our" if next.as_deref().is_some_and(|n| NAME_LIKE.contains(&n)) => continue,
            "my" | "our" => "their",
            "mine" | "ours" => "theirs",
            "me" | "us" => "them",
            "myself" | "ourselves" => "themselves",
            "i" | "we" => "they",
            "i'm" | "we're" => "they're",
            "i've" | "we've" => "they've",
            "i'd" | "we'd" => "they'd",
            "i'll" | "we'll" => "they'll",
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
            r"(?i)(?:[,;!?()\[\]]|[.:](?:\s|$)|\s-\s|\s+(?:but|because|cause|cuz|coz|since|though|although|which|who|unless|while|whereas|whenever|except|lol|haha|hahaha|lmao|btw|tbh|honestly|anyway|anyways|and\s+(?:i|i'm|i've|my|we|we're|it|it's|that|then|also|so|now|they|he|she|you)|so\s+(?:i|i'm|it|that|we)|if|when|as\s+well|too|either|anymore|any\s+more|any\s+longer|now|these\s+days|nowadays|right\s+now|at\s+the\s+moment|currently|for\s+now|again|ever\s+since|please|pls|thanks|thank\s+you|so\s+much|a\s+lot|very\s+much|instead)\b)",
        )
        .expect("clause cut regex")
    })
}

/// The head of a captured phrase, up to the first clause break or trailing adverb.
pub(super) fn head(s: &str) -> &str {
    let s = s.trim_start();
    let cut = clause_cut().find(s).map_or(s, |m| &s[..m.start()]);
    cut.trim().trim_end_matches(|c: char| !c.is_alphanumeric() && c != '+' && c != '#' && c != ')')
}

/// A captured phrase cut at its clause break and rewritten in the third person.
pub(super) fn phrase(s: &str) -> Option<String> {
    let t = third_person(&tidy(head(s)));
    (t.chars().count() >= 2 && !is_vague(&t)).then_some(t)
}

/// Strips time words from a phrase ("my mom last night" → "my mom", "my job last week" → "my job").
pub(super) fn strip_times(obj: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?i)\b(?:(?:last|this|next)\s+(?:night|week|month|year|weekend|time|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|yesterday(?:\s+(?:morning|afternoon|evening|night))?|this\s+(?:morning|afternoon|evening|week)|today|tonight|earlier(?:\s+today)?|just\s+now|finally|at\s+last|already|on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|over\s+the\s+weekend|(?:a\s+few|a\s+couple\s+of|a|an|\d+|two|three|several)\s+(?:minutes|hours|days|weeks|months|years|hour|day|week|month|year)\s+ago|recently|lately|the\s+other\s+day|last\s+(?:fri|mon|tue|wed|thu|sat|sun)|earlier\s+this\s+(?:week|month|year)|for\s+(?:a\s+while|weeks|months|years|ages)|(?:not\s+so\s+|not\s+that\s+)?long\s+ago|a\s+while\s+(?:ago|back)|some\s+time\s+ago|for\s+the\s+(?:past|last)\s+(?:few\s+|couple\s+of\s+|\w+\s+)?(?:days|weeks|months|years)|last\s+(?:week|month|year)|in\s+the\s+end|in\s+time|on\s+time|successfully|yay|woo+|haha|lol)\b",
        )
        .expect("past time regex")
    });
    tidy(&re.replace_all(obj, " "))
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
    IRREGULAR.iter().any(|(p, _)| *p == w) || (w.len() > 4 && w.ends_with("ed"))
}

/// The third-person singular of a base verb ("deploy" → "deploys", "fix" → "fixes").
pub(super) fn third_singular(verb: &str) -> String {
    let v = verb.to_lowercase();
    match v.as_str() {
        "have" => "has".into(),
        "be" => "is".into(),
        "do" => "does".into(),
        "go" => "goes".into(),
        _ if v.ends_with(['s', 'x', 'z']) || v.ends_with("ch") || v.ends_with("sh") => format!("{v}es"),
        _ if v.ends_with('y') && !v.ends_with("ay") && !v.ends_with("ey") && !v.ends_with("oy") => {
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
        "grandma" | "grandmother" | "granny" | "nana" => &["grandma", "grandmother"],
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
    let r = tidy(&rel.to_lowercase());
    match r.as_str() {
        "mom" | "mum" | "mommy" | "mummy" | "mama" | "mother" => "mother".into(),
        "dad" | "daddy" | "papa" | "father" => "father".into(),
        "fiancé" | "fiance" | "fiancée" | "fiancee" => "fiance".into(),
        "grandma" | "granny" | "nana" | "grandmother" => "grandmother".into(),
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

/// Words that look like names at the start of "I'm X" but are not names.
pub(super) fn is_not_a_name(w: &str) -> bool {
    const NOT_NAMES: &[&str] = &[
        "american",
        "canadian",
        "mexican",
        "brazilian",
        "argentinian",
        "chilean",
        "colombian",
        "peruvian",
        "british",
        "english",
        "scottish",
        "welsh",
        "irish",
        "french",
        "german",
        "italian",
        "spanish",
        "portuguese",
        "dutch",
        "belgian",
        "swiss",
        "austrian",
        "swedish",
        "norwegian",
        "danish",
        "finnish",
        "icelandic",
        "polish",
        "czech",
        "slovak",
        "hungarian",
        "romanian",
        "bulgarian",
        "greek",
        "turkish",
        "russian",
        "ukrainian",
        "chinese",
        "japanese",
        "korean",
        "vietnamese",
        "thai",
        "filipino",
        "indonesian",
        "malaysian",
        "indian",
        "pakistani",
        "bangladeshi",
        "iranian",
        "iraqi",
        "israeli",
        "egyptian",
        "moroccan",
        "nigerian",
        "kenyan",
        "ethiopian",
        "ghanaian",
        "australian",
        "european",
        "asian",
        "african",
        "latino",
        "latina",
        "hispanic",
        "jewish",
        "muslim",
        "christian",
        "catholic",
        "protestant",
        "hindu",
        "buddhist",
        "sikh",
        "mormon",
        "atheist",
        "agnostic",
        "gen",
        "not",
        "so",
        "just",
        "still",
        "also",
        "really",
        "very",
        "the",
        "a",
        "an",
        "in",
        "at",
        "on",
        "from",
        "with",
        "going",
        "trying",
        "glad",
        "happy",
        "excited",
        "tired",
        "sure",
        "ready",
        "free",
        "home",
        "out",
        "off",
        "busy",
        "back",
        "here",
        "there",
        "done",
        "fine",
        "good",
        "great",
        "ok",
        "okay",
        "sorry",
        "afraid",
        "currently",
        "now",
        "always",
        "never",
        "about",
        "looking",
        "working",
        "thinking",
        "new",
        "learning",
        "getting",
        "feeling",
        "doing",
        "super",
        "pretty",
        "quite",
        "totally",
        "kinda",
        "bored",
        "hungry",
        "vegan",
        "vegetarian",
        "single",
        "married",
        "divorced",
        "pregnant",
        "retired",
        "unemployed",
        "left",
        "right",
        "like",
        "more",
        "less",
        "all",
        "only",
        "even",
        "almost",
        "literally",
        "honestly",
        "actually",
        "basically",
        "definitely",
        "probably",
        "maybe",
        "somewhat",
        "originally",
        "based",
        "living",
        "moving",
        "staying",
        "planning",
        "hoping",
        "writing",
        "reading",
        "building",
        "running",
        "using",
        "making",
        "asking",
        "telling",
        "saying",
        "coming",
        "leaving",
        "heading",
        "stuck",
        "late",
        "early",
        "curious",
        "interested",
        "confused",
        "wondering",
        "aware",
        "allergic",
        "male",
        "female",
        "trans",
        "gay",
        "straight",
        "bi",
        "queer",
        "nonbinary",
        "neurodivergent",
        "autistic",
        "deaf",
        "blind",
        "dyslexic",
        "english-speaking",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "team",
        "mr",
        "mrs",
        "ms",
        "dr",
        "sir",
        "i",
        "it",
        "this",
        "that",
        "what",
        "who",
        "one",
        "two",
        "three",
        "your",
        "you",
        "his",
        "her",
    ];
    let w = w.to_lowercase();
    // "I'm Going", "I'm Trying": a gerund is no name ("Lily", "Ned" and "Mohammed" are).
    NOT_NAMES.contains(&w.as_str()) || (w.ends_with("ing") && w.len() >= 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn third_person_rewrites_and_keeps_kinship_names() {
        assert_eq!(third_person("call my mom this weekend"), "call mom this weekend");
        assert_eq!(third_person("send my slides to my boss"), "send their slides to their boss");
        assert_eq!(third_person("I am sure I was right"), "they are sure they were right");
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
        assert_eq!(third_singular("fix"), "fixes");
        assert_eq!(third_singular("carry"), "carries");
        assert_eq!(article("interview"), "an");
        assert_eq!(article("dentist appointment"), "a");
        assert_eq!(species_key("puppies"), "dog");
        assert_eq!(relation_key("Mum"), "mother");
    }
}
