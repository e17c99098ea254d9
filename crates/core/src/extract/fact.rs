//! Facts about the user's world: account and customer ids, and technical facts ("our prod
//! database is Postgres 16 in us-east-1", "we deploy with ArgoCD", "my laptop runs Arch Linux").
//!
//! Facts must be surer than other kinds (the gate's floor is 0.7) and are surfaced as
//! fact-check: never contradicted. Secrets, card numbers and the like are never proposed.

use regex::Captures;

use super::lex::{head, third_person, third_singular};
use super::rule::{Found, Mode, Rule, Sentence, cap};
use super::tool::lookup;
use crate::kind::Kind;
use crate::op::Draft;
use crate::text::tidy;

fn fact(content: String, conf: f32, sal: f32) -> Draft {
    Draft::new(Kind::Fact, content, conf, sal)
}

/// Identifiers that are secrets or personal data, never stored.
pub(super) const SECRET_IDS: &[&str] = &[
    "address",
    "api",
    "bank",
    "card",
    "cvc",
    "cvv",
    "driver",
    "email",
    "iban",
    "insurance number",
    "key",
    "licence",
    "license",
    "national",
    "passcode",
    "passport",
    "password",
    "phone",
    "pin",
    "routing",
    "secret",
    "security",
    "social",
    "sort code",
    "ssn",
    "tax",
    "token",
    "vat",
];

/// What a tech fact is about ("our staging database is hosted on Hetzner"), after the owner and
/// any qualifiers; a scoped `(?x:...)` group, so it reads the same spliced into any pattern.
const TECH: &str = r"(?x:
    # code and the services it makes up
    database | db | databases | tech\s+stack | stack | backend | back\s+end | frontend | front\s+end
    | api | apis | servers? | cluster | infra | infrastructure | app | application | services?
    | website | site | repo | repository | monorepo | codebase | ci | ci/cd | pipeline | cloud
    | hosting | region
    # the machine one works on
    | laptop | machine | computer | desktop | workstation | os
    # infrastructure parts
    | cache | queue | message\s+broker | broker | orm | cdn | dns | load\s+balancer
    | kubernetes\s+cluster | k8s\s+cluster | vpc | bucket | data\s+warehouse | warehouse
    | mobile\s+app | ios\s+app | android\s+app | web\s+app
    # how code is built, tested, shipped and watched
    | main\s+branch | default\s+branch | build\s+system | builds? | test\s+suite | tests
    | deploys? | deployments? | runtime | schema | auth | authentication | search | logging
    | monitoring | metrics | alerting
    # hardware at home, versions and everything else a team runs
    | router | nas | homelab | home\s+server | raspberry\s+pi | gpu | cpu | ram | storage
    | node\s+version | python\s+version | orchestrator | scheduler | data\s+pipeline | etl
    | product | platform | saas | microservices?
)";

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "fact.account-id",
            Mode::Statement,
            &["id", "number", "no.", "#", "code", "username", "handle"],
            r"(?x)
                # e.g. My customer number is 88213-B.
                \b(?:(?P<owner>my|our)\s+)?(?P<what>
                    (?:[\w-]+\s+){0,2}?(?:
                        account | customer | member | membership | user | client | subscriber | employee
                        | student | policy | booking | reservation | confirmation | order | ticket
                        | case | loyalty | frequent\s+flyer | patient | tenant | workspace | org
                        | organization | organisation | project | instance | device | serial | support
                        | contract | invoice | shipment | tracking
                    )
                    \s*(?:id|ids|number|no\.?|\#|code|name|handle|username)
                    | username
                    | user\s*name
                    | handle
                    | gamertag
                )
                \s*(?:is|=|:|was|should\s+be)\s+\#?(?P<x>[A-Za-z0-9][A-Za-z0-9_\-./@]*[A-Za-z0-9])
            ",
            |c, _| {
                let what = tidy(cap(c, "what").unwrap_or_default());
                let wl = what.to_lowercase();
                let x = cap(c, "x").unwrap_or_default();
                if SECRET_IDS.iter().any(|w| wl.contains(w)) || x.contains('@') {
                    return Vec::new();
                }
                // An id has a digit, a separator or capitals; "my user name is dana" says less.
                let id_like = x.chars().any(|c| c.is_ascii_digit())
                    || x.contains(['-', '_'])
                    || (x.len() >= 3 && x.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()));
                let owner = cap(c, "owner").map(str::to_lowercase);
                if !id_like && !wl.contains("user") && !wl.contains("handle") && !wl.contains("gamertag") {
                    return Vec::new();
                }
                if owner.is_none() && !(wl.ends_with("id") || wl.ends_with("number") || wl.ends_with('#')) {
                    return Vec::new();
                }
                let whose = if owner.as_deref() == Some("our") { "User's team's" } else { "User's" };
                let key = format!("id:{}", wl.replace(' ', "_"));
                vec![Found::add(fact(format!("{whose} {what} is {x}"), 0.9, 0.8).keyed(key, x))]
            },
        ),
        Rule::new(
            "fact.tech-owned",
            Mode::Statement,
            &["my ", "our ", "the "],
            &format!(
                r"(?x)
                    # e.g. Our staging database is hosted on Hetzner.
                    \b(?P<owner>my|our|the)\s+(?P<subj>
                        (?:
                            (?:
                                prod | production | staging | dev | development | test | main | primary | new
                                | old | current | internal | company | company's | team's | work | home
                                | personal | whole | entire | backend | frontend | mobile | web | legacy | core
                                | shared | default | public | private | only
                            )
                            \s+
                        )*
                        {TECH}
                    )
                    \s+(?P<v>
                        (?:is|are)\s+(?:written|built|hosted|deployed|running|based|implemented|developed)\s+(?:in|on|with|at|to|using)
                        | runs\s+on
                        | run\s+on
                        | runs
                        | run
                        | uses
                        | use
                        | (?:is|are)\s+on
                        | lives?\s+(?:on|in)
                        | sits?\s+(?:on|in)
                        | (?:is|are)\s+in
                        | is
                        | are
                        | has
                        | have
                        | talks\s+to
                        | depends\s+on
                    )
                    \s+(?P<x>[^,;!?]+)
                "
            ),
            tech,
        ),
        Rule::new(
            "fact.tech-we",
            Mode::Statement,
            &["we"],
            r"(?x)
                # e.g. We deploy everything with Kubernetes on GKE.
                \bwe(?:'re|\s+are|'ve|\s+have)?\s+(?:
                    (?:
                        now | currently | still | mostly | mainly | also | only | all | just | recently
                        | finally | always | usually
                    )
                    \s+
                )*
                (?P<v>
                    deploy | deploying | host | hosting | self-host | build | building | store
                    | storing | ship | shipping | test | testing | monitor | monitoring | log
                    | logging | manage | managing | track | tracking | orchestrate | provision
                    | provisioning | package | containerize | bundle | cache | caching
                    | been\s+using | standardi[sz]ed\s+on | rely\s+on | run\s+on | are\s+on
                )
                \s+(?P<x>[^,;!?]+)
            ",
            |c, s| {
                let v = cap(c, "v").unwrap_or_default().to_lowercase();
                let x = cap(c, "x").unwrap_or_default();
                let x = tidy(head(x));
                if !mentions_tech(&x, s) {
                    return Vec::new();
                }
                let verb = if v.ends_with("ing") || v.contains(' ') {
                    format!("is {}", third_person(&v))
                } else {
                    third_singular(&v)
                };
                let verb = verb.replace("is been using", "uses").replace("is are on", "is on");
                let key = x
                    .split(|c: char| c.is_whitespace())
                    .find_map(|w| lookup(w, s))
                    .map(|(_, cat)| format!("stack:{cat}"));
                let d = fact(format!("User's team {verb} {}", third_person(&x)), 0.85, 0.6);
                vec![Found::add(match key {
                    Some(k) if ["deploy", "deploying", "host", "hosting"].contains(&v.as_str()) => {
                        let shown = x.split_whitespace().find_map(|w| lookup(w, s)).map(|(n, _)| n).unwrap_or_default();
                        d.keyed(k, shown)
                    }
                    _ => d,
                })]
            },
        ),
        Rule::new(
            "fact.tech-i-host",
            Mode::Statement,
            &["host", "deploy", "self-host", "run"],
            r"\bi\s+(?:(?:mostly|usually|always|now|also|just)\s+)*(?P<v>host|deploy|self-host|selfhost|run)\s+(?P<x>[^,;!?]+)",
            |c, s| {
                let v = cap(c, "v").unwrap_or_default().to_lowercase();
                let x = tidy(head(cap(c, "x").unwrap_or_default()));
                // "I run a bakery in Leeds" is no tech fact: a known tool or a technical token is.
                let techy = x.split_whitespace().any(|w| {
                    lookup(w, s).is_some()
                        || w.chars().any(|c| c.is_ascii_digit())
                        || (w.contains(['.', '-']) && w.len() > 3)
                });
                if !techy {
                    return Vec::new();
                }
                vec![Found::add(fact(format!("User {} {}", third_singular(&v), third_person(&x)), 0.85, 0.6))]
            },
        ),
    ]
}

/// Whether a phrase names technology: a known tool, a version, a region or a product name.
fn mentions_tech(x: &str, s: &Sentence<'_>) -> bool {
    x.split_whitespace().any(|w| {
        lookup(w, s).is_some()
            || w.chars().any(|c| c.is_ascii_digit())
            || (w.contains(['-', '.']) && w.len() > 3)
            || (w.len() > 1 && w.starts_with(char::is_uppercase))
    }) || lookup(x, s).is_some()
}

fn tech(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    let owner = cap(c, "owner").unwrap_or("my").to_lowercase();
    let subj = tidy(cap(c, "subj").unwrap_or_default());
    let v = tidy(&cap(c, "v").unwrap_or_default().to_lowercase());
    let x = tidy(head(cap(c, "x").unwrap_or_default()));
    if x.is_empty() || !mentions_tech(&x, s) {
        return Vec::new();
    }
    // "my laptop is dead", "our app is slow": states, not facts.
    let first = x.split_whitespace().next().unwrap_or_default().to_lowercase();
    if ["down", "dead", "broken", "slow", "fine", "great", "a", "so", "really", "very", "too", "not"]
        .contains(&first.as_str())
        && !x.split_whitespace().skip(1).any(|w| lookup(w, s).is_some() || w.starts_with(char::is_uppercase))
    {
        return Vec::new();
    }
    let whose = match owner.as_str() {
        "our" => "User's team's",
        "the" => "The",
        _ => "User's",
    };
    let content = format!("{whose} {subj} {v} {}", third_person(&x));
    let key = format!("fact:{}", subj.to_lowercase().replace(' ', "_"));
    vec![Found::add(fact(content, 0.85, 0.7).keyed(key, x))]
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::{contents, keyed, none, nothing_written, only_episodes, run};
    use crate::kind::{Kind, Surface};

    #[test]
    fn ids_and_tech_facts() {
        assert_eq!(contents("My account id is ACME-4471."), vec!["User's account id is ACME-4471"]);
        assert_eq!(keyed("my customer number is 88123", "id:customer_number"), Some("88123".into()));
        assert_eq!(keyed("Account ID: ZX-9921", "id:account_id"), Some("ZX-9921".into()));
        assert_eq!(
            contents("Our prod database is Postgres 16 in us-east-1."),
            vec!["User's team's prod database is Postgres 16 in us-east-1"]
        );
        assert_eq!(contents("we deploy with ArgoCD"), vec!["User's team deploys with ArgoCD"]);
        assert_eq!(contents("My laptop runs Arch Linux"), vec!["User's laptop runs Arch Linux"]);
        assert_eq!(contents("our API is written in Go"), vec!["User's team's API is written in Go"]);
        assert_eq!(contents("I deploy to Vercel."), vec!["User deploys to Vercel"]);
        assert_eq!(contents("The staging cluster lives in eu-west-2."), vec!["The staging cluster lives in eu-west-2"]);
        assert_eq!(keyed("we're on GCP", "stack:cloud"), Some("GCP".into()));
        let ops = run("we host everything on Fly.io");
        assert_eq!(ops[0].draft.kind, Kind::Fact);
        assert_eq!(ops[0].draft.effective_surface(), Surface::FactCheck);
        assert!(ops[0].draft.confidence >= 0.7);
    }

    #[test]
    fn secrets_and_states_are_not_facts() {
        none("my password is hunter2");
        only_episodes("My laptop is dead");
        only_episodes("our app is slow today");
        none("my pin is 1234");
        nothing_written("maybe our database is Postgres, not sure");
    }
}
