//! Tools and switches: "I use Neovim", "I'm on Arch", "switched from Vim to Neovim", "we moved
//! our database to Postgres".
//!
//! A tool is keyed by its category (`tool:editor`, `tool:language`, ...; `stack:<category>` when
//! "we" speak for a team), so a switch supersedes the old tool instead of adding a second one.
//! Switches of things outside the lexicon ("switched from coffee to tea") become unkeyed
//! preferences that replace whatever best matches the old value.

use regex::Captures;

use super::rule::{Found, Mode, Rule, Sentence, cap};
use crate::kind::Kind;
use crate::op::{Action, Draft, Target};

/// Known tools: lower-case name and category. Longest names are tried first by [`lookup`].
const TOOLS: &[(&str, &str)] = &[
    // editors
    ("vim", "editor"),
    ("neovim", "editor"),
    ("nvim", "editor"),
    ("emacs", "editor"),
    ("doom emacs", "editor"),
    ("spacemacs", "editor"),
    ("vscode", "editor"),
    ("vs code", "editor"),
    ("visual studio code", "editor"),
    ("visual studio", "editor"),
    ("intellij", "editor"),
    ("intellij idea", "editor"),
    ("pycharm", "editor"),
    ("webstorm", "editor"),
    ("goland", "editor"),
    ("rustrover", "editor"),
    ("clion", "editor"),
    ("rider", "editor"),
    ("android studio", "editor"),
    ("xcode", "editor"),
    ("sublime", "editor"),
    ("sublime text", "editor"),
    ("atom", "editor"),
    ("nano", "editor"),
    ("helix", "editor"),
    ("zed", "editor"),
    ("cursor", "editor"),
    ("kakoune", "editor"),
    ("notepad++", "editor"),
    ("eclipse", "editor"),
    ("netbeans", "editor"),
    ("rstudio", "editor"),
    ("bbedit", "editor"),
    ("textmate", "editor"),
    ("windsurf", "editor"),
    ("fleet", "editor"),
    // programming languages
    ("rust", "language"),
    ("python", "language"),
    ("go", "language"),
    ("golang", "language"),
    ("java", "language"),
    ("javascript", "language"),
    ("typescript", "language"),
    ("kotlin", "language"),
    ("swift", "language"),
    ("c", "language"),
    ("c++", "language"),
    ("cpp", "language"),
    ("c#", "language"),
    ("csharp", "language"),
    ("ruby", "language"),
    ("php", "language"),
    ("elixir", "language"),
    ("erlang", "language"),
    ("haskell", "language"),
    ("scala", "language"),
    ("clojure", "language"),
    ("zig", "language"),
    ("dart", "language"),
    ("julia", "language"),
    ("lua", "language"),
    ("perl", "language"),
    ("ocaml", "language"),
    ("f#", "language"),
    ("nim", "language"),
    ("crystal", "language"),
    ("objective-c", "language"),
    ("fortran", "language"),
    ("cobol", "language"),
    ("matlab", "language"),
    ("gleam", "language"),
    ("elm", "language"),
    ("solidity", "language"),
    // operating systems
    ("linux", "os"),
    ("arch", "os"),
    ("arch linux", "os"),
    ("ubuntu", "os"),
    ("debian", "os"),
    ("fedora", "os"),
    ("linux mint", "os"),
    ("pop!_os", "os"),
    ("pop os", "os"),
    ("manjaro", "os"),
    ("nixos", "os"),
    ("gentoo", "os"),
    ("opensuse", "os"),
    ("macos", "os"),
    ("mac os", "os"),
    ("osx", "os"),
    ("os x", "os"),
    ("mac", "os"),
    ("windows", "os"),
    ("windows 11", "os"),
    ("windows 10", "os"),
    ("wsl", "os"),
    ("chromeos", "os"),
    ("freebsd", "os"),
    ("openbsd", "os"),
    // databases
    ("postgres", "db"),
    ("postgresql", "db"),
    ("mysql", "db"),
    ("mariadb", "db"),
    ("sqlite", "db"),
    ("mongodb", "db"),
    ("mongo", "db"),
    ("redis", "db"),
    ("dynamodb", "db"),
    ("cassandra", "db"),
    ("cockroachdb", "db"),
    ("clickhouse", "db"),
    ("snowflake", "db"),
    ("bigquery", "db"),
    ("supabase", "db"),
    ("firebase", "db"),
    ("sql server", "db"),
    ("mssql", "db"),
    ("elasticsearch", "db"),
    ("opensearch", "db"),
    ("neo4j", "db"),
    ("duckdb", "db"),
    ("planetscale", "db"),
    ("timescaledb", "db"),
    ("couchdb", "db"),
    ("influxdb", "db"),
    ("oracle", "db"),
    // clouds and hosts
    ("aws", "cloud"),
    ("amazon web services", "cloud"),
    ("gcp", "cloud"),
    ("google cloud", "cloud"),
    ("azure", "cloud"),
    ("digitalocean", "cloud"),
    ("hetzner", "cloud"),
    ("linode", "cloud"),
    ("fly.io", "cloud"),
    ("vercel", "cloud"),
    ("netlify", "cloud"),
    ("heroku", "cloud"),
    ("cloudflare", "cloud"),
    ("render", "cloud"),
    ("railway", "cloud"),
    ("ovh", "cloud"),
    // browsers
    ("firefox", "browser"),
    ("chrome", "browser"),
    ("google chrome", "browser"),
    ("safari", "browser"),
    ("brave", "browser"),
    ("edge", "browser"),
    ("microsoft edge", "browser"),
    ("arc", "browser"),
    ("vivaldi", "browser"),
    ("opera", "browser"),
    ("chromium", "browser"),
    // shells and terminals
    ("zsh", "shell"),
    ("bash", "shell"),
    ("fish", "shell"),
    ("nushell", "shell"),
    ("powershell", "shell"),
    ("iterm", "terminal"),
    ("iterm2", "terminal"),
    ("alacritty", "terminal"),
    ("wezterm", "terminal"),
    ("ghostty", "terminal"),
    ("warp", "terminal"),
    ("tmux", "terminal"),
    ("windows terminal", "terminal"),
    ("konsole", "terminal"),
    // devices
    ("iphone", "phone"),
    ("android", "phone"),
    ("pixel", "phone"),
    ("samsung", "phone"),
    ("galaxy", "phone"),
    ("oneplus", "phone"),
    ("macbook", "laptop"),
    ("macbook pro", "laptop"),
    ("macbook air", "laptop"),
    ("thinkpad", "laptop"),
    ("xps", "laptop"),
    ("framework laptop", "laptop"),
    ("chromebook", "laptop"),
    // apps
    ("notion", "notes"),
    ("obsidian", "notes"),
    ("evernote", "notes"),
    ("logseq", "notes"),
    ("roam", "notes"),
    ("bear", "notes"),
    ("apple notes", "notes"),
    ("onenote", "notes"),
    ("google keep", "notes"),
    ("joplin", "notes"),
    ("todoist", "tasks"),
    ("things", "tasks"),
    ("ticktick", "tasks"),
    ("trello", "tasks"),
    ("asana", "tasks"),
    ("jira", "tasks"),
    ("linear", "tasks"),
    ("clickup", "tasks"),
    ("omnifocus", "tasks"),
    ("slack", "chat"),
    ("discord", "chat"),
    ("microsoft teams", "chat"),
    ("whatsapp", "chat"),
    ("telegram", "chat"),
    ("signal", "chat"),
    ("imessage", "chat"),
    ("zulip", "chat"),
    ("mattermost", "chat"),
    ("spotify", "music"),
    ("apple music", "music"),
    ("tidal", "music"),
    ("youtube music", "music"),
    ("deezer", "music"),
    ("soundcloud", "music"),
    ("git", "vcs"),
    ("mercurial", "vcs"),
    ("svn", "vcs"),
    ("perforce", "vcs"),
    ("jujutsu", "vcs"),
    ("github", "code_host"),
    ("gitlab", "code_host"),
    ("bitbucket", "code_host"),
    ("codeberg", "code_host"),
    ("github actions", "ci"),
    ("gitlab ci", "ci"),
    ("jenkins", "ci"),
    ("circleci", "ci"),
    ("travis", "ci"),
    ("buildkite", "ci"),
    ("argocd", "ci"),
    ("argo cd", "ci"),
    ("teamcity", "ci"),
    ("docker", "containers"),
    ("podman", "containers"),
    ("kubernetes", "containers"),
    ("k8s", "containers"),
    ("nomad", "containers"),
    ("react", "framework"),
    ("vue", "framework"),
    ("svelte", "framework"),
    ("angular", "framework"),
    ("next.js", "framework"),
    ("nextjs", "framework"),
    ("nuxt", "framework"),
    ("remix", "framework"),
    ("django", "framework"),
    ("flask", "framework"),
    ("fastapi", "framework"),
    ("rails", "framework"),
    ("ruby on rails", "framework"),
    ("laravel", "framework"),
    ("spring", "framework"),
    ("spring boot", "framework"),
    ("express", "framework"),
    ("nestjs", "framework"),
    ("phoenix", "framework"),
    ("axum", "framework"),
    ("actix", "framework"),
    ("tauri", "framework"),
    ("flutter", "framework"),
    ("react native", "framework"),
    ("htmx", "framework"),
    ("astro", "framework"),
    ("sveltekit", "framework"),
    ("dvorak", "keyboard_layout"),
    ("colemak", "keyboard_layout"),
    ("qwerty", "keyboard_layout"),
    ("workman", "keyboard_layout"),
    ("gmail", "email"),
    ("outlook", "email"),
    ("fastmail", "email"),
    ("protonmail", "email"),
    ("proton mail", "email"),
    ("thunderbird", "email"),
    ("superhuman", "email"),
    ("figma", "design"),
    ("sketch", "design"),
    ("photoshop", "design"),
    ("illustrator", "design"),
    ("canva", "design"),
    ("blender", "design"),
    ("affinity", "design"),
    ("chatgpt", "ai_assistant"),
    ("claude", "ai_assistant"),
    ("copilot", "ai_assistant"),
    ("github copilot", "ai_assistant"),
    ("gemini", "ai_assistant"),
    ("perplexity", "ai_assistant"),
    ("1password", "password_manager"),
    ("bitwarden", "password_manager"),
    ("lastpass", "password_manager"),
    ("keepass", "password_manager"),
    ("dashlane", "password_manager"),
];

/// Tool names that are also everyday words: only when written with a capital.
pub(super) const AMBIGUOUS: &[&str] = &[
    "affinity", "android", "angular", "arc", "arch", "astro", "atom", "bear", "brave", "c", "chrome", "claude",
    "crystal", "cursor", "dart", "eclipse", "edge", "elm", "express", "fish", "flask", "fleet", "galaxy", "gemini",
    "git", "gitlab", "go", "helix", "julia", "linear", "mac", "nano", "nomad", "notion", "opera", "oracle", "phoenix",
    "pixel", "rails", "railway", "react", "remix", "render", "rider", "roam", "ruby", "rust", "safari", "signal",
    "sketch", "spring", "surface", "swift", "things", "tidal", "travis", "vue", "warp", "windows",
];

/// The words a category reads as in content.
pub(super) fn noun(category: &str) -> &'static str {
    match category {
        "editor" => "editor",
        "language" => "programming language",
        "os" => "operating system",
        "db" => "database",
        "cloud" => "cloud provider",
        "browser" => "browser",
        "shell" => "shell",
        "terminal" => "terminal",
        "phone" => "phone",
        "laptop" => "laptop",
        "notes" => "note-taking app",
        "tasks" => "task manager",
        "chat" => "chat app",
        "music" => "music app",
        "vcs" => "version control",
        "code_host" => "code host",
        "ci" => "CI/CD tool",
        "containers" => "container platform",
        "framework" => "framework",
        "keyboard_layout" => "keyboard layout",
        "email" => "email client",
        "design" => "design tool",
        "ai_assistant" => "AI assistant",
        "password_manager" => "password manager",
        _ => "tool",
    }
}

/// The category a category noun names ("text editor" → editor).
fn category_of_noun(n: &str) -> Option<&'static str> {
    let n = n.to_lowercase();
    Some(match n.split_whitespace().collect::<Vec<_>>().join(" ").as_str() {
        "editor" | "text editor" | "code editor" | "ide" => "editor",
        "programming language" | "language" => "language",
        "os" | "operating system" | "distro" | "linux distro" => "os",
        "browser" | "web browser" => "browser",
        "shell" => "shell",
        "terminal" | "terminal emulator" => "terminal",
        "database" | "db" => "db",
        "phone" => "phone",
        "laptop" | "computer" | "machine" => "laptop",
        "keyboard layout" => "keyboard_layout",
        "note-taking app" | "notetaking app" | "notes app" => "notes",
        "task manager" | "todo app" | "to-do app" => "tasks",
        "cloud" | "cloud provider" => "cloud",
        "music app" => "music",
        "password manager" => "password_manager",
        "email client" => "email",
        "framework" => "framework",
        _ => return None,
    })
}

/// A tool named at the start of `x`: its text as written (with a version number if one
/// follows) and its category.
pub(super) fn lookup(x: &str, s: &Sentence<'_>) -> Option<(String, &'static str)> {
    let x = x.trim_start();
    let x = ["the ", "a ", "an ", "my ", "our "].iter().fold(x, |acc, a| {
        if acc.len() > a.len() && acc.get(..a.len()).is_some_and(|p| p.eq_ignore_ascii_case(a)) {
            &acc[a.len()..]
        } else {
            acc
        }
    });
    let words: Vec<(usize, &str)> =
        x.split_whitespace().map(|w| (w.as_ptr() as usize - x.as_ptr() as usize, w)).take(4).collect();
    for n in (1..=words.len().min(3)).rev() {
        let (start, _) = words[0];
        let (last_start, last) = words[n - 1];
        let end = last_start + last.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '+' && c != '#').len();
        let name = &x[start..end];
        let lower = name.to_lowercase();
        let Some((_, cat)) = TOOLS.iter().find(|(t, _)| *t == lower) else { continue };
        if AMBIGUOUS.contains(&lower.as_str()) && !s.lowercase && !name.starts_with(|c: char| c.is_uppercase()) {
            continue;
        }
        // "Postgres 16", "Python 3.12", "Windows 11": keep a version that follows.
        let mut shown = name.to_string();
        if let Some((_, v)) = words.get(n) {
            let v = v.trim_end_matches(|c: char| !c.is_alphanumeric());
            if v.chars().next().is_some_and(|c| c.is_ascii_digit()) && v.len() <= 6 {
                shown = format!("{shown} {v}");
            }
        }
        return Some((shown, cat));
    }
    None
}

fn tool_found(subj: &str, shown: &str, cat: &str) -> Found {
    let team = subj.eq_ignore_ascii_case("we");
    let draft = if team {
        Draft::new(Kind::Fact, format!("User's team uses {shown} as their {}", noun(cat)), 0.85, 0.6)
            .keyed(format!("stack:{cat}"), shown)
    } else {
        Draft::new(Kind::Preference, format!("User uses {shown} as their {}", noun(cat)), 0.85, 0.6)
            .keyed(format!("tool:{cat}"), shown)
    };
    Found::add(draft)
}

pub(super) const HARDWARE: &[&str] = &["laptop", "phone"];

/// The rules of this family, in priority order.
pub(super) fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "tool.switch-from-to",
            Mode::Statement,
            &["from"],
            r"(?x)
                # e.g. I switched from VS Code to Zed.
                \b(?:(?P<subj>i|we)(?:'ve|\s+have|'re|\s+are|'m|\s+am)?\s+)?(?:
                    (?:
                        finally | just | recently | now | officially | completely | fully | also
                        | totally | eventually | already
                    )
                    \s+
                )*
                (?P<v>
                    switched | moved | migrated | changed | transitioned | converted | went | jumped
                    | upgraded | downgraded | ported | switching | moving | migrating
                )
                \s+(?:
                    over\s+
                    | everything\s+
                    | it\s+all\s+
                    | (?:our|my|the)\s+[\w-]+(?:\s+[\w-]+)?\s+
                )?
                from\s+(?P<a>[^,;!?]+?)\s+(?:over\s+)?to\s+(?P<b>[^,;!?]+)
            ",
            switch,
        ),
        Rule::new(
            "tool.switch-replaced",
            Mode::Statement,
            &["replaced", "swapped", "ditched", "dropped", "traded"],
            r"(?x)
                # e.g. I replaced Evernote with Obsidian.
                \b(?:(?P<subj>i|we)(?:'ve|\s+have)?\s+)?(?:(?:finally|just|recently|completely)\s+)*
                (?P<v>replaced|swapped|ditched|dropped|traded)\s+(?:out\s+)?
                # the old tool, then the new one
                (?P<a>[^,;!?]+?)\s+(?:for|with)\s+(?P<b>[^,;!?]+)
            ",
            switch,
        ),
        Rule::new(
            "tool.switch-instead",
            Mode::Statement,
            &["instead", "rather than"],
            r"(?x)
                # e.g. I use Firefox instead of Chrome.
                \b(?P<subj>i|we)(?:'m|\s+am|'re|\s+are)?\s+(?:(?:now|mostly|just|only)\s+)*
                (?P<v>use|using|prefer|chose|picked|went\s+with|code\s+in|write)\s+
                # the new tool, then the old one
                (?P<b>[^,;!?]+?)\s+(?:now\s+)?(?:instead\s+of|rather\s+than)\s+(?P<a>[^,;!?]+)
            ",
            switch,
        ),
        Rule::new(
            "tool.tool-use",
            Mode::Statement,
            &[],
            r"(?x)
                # e.g. I mostly code in Go.
                \b(?P<subj>i|we)(?:'ve|'re|'m|\s+am|\s+are|\s+have)?\s+(?:
                    (?:
                        now | mostly | mainly | primarily | usually | only | exclusively | still | also
                        | just | always | currently | basically | pretty\s+much | really | been
                        | actually | happily | personally | finally | recently | daily
                    )
                    \s+
                )*
                (?P<v>
                    use
                    | using
                    | code\s+in
                    | coding\s+in
                    | program\s+in
                    | programming\s+in
                    | write\s+(?:code\s+)?in
                    | writing\s+(?:code\s+)?in
                    | write
                    | writing
                    | develop\s+in
                    | developing\s+in
                    | run
                    | running
                    | on
                    | rely\s+on
                    | swear\s+by
                    | daily[-\x20]drive
                    | main
                    | prefer
                    | work\s+(?:mostly\s+|mainly\s+)?(?:in|with)
                    | working\s+(?:in|with)
                    | build\s+(?:everything\s+|stuff\s+|things\s+|apps\s+)?(?:in|with)
                    | live\s+in
                    | stick\s+with
                    | went\s+with
                    | chose
                    | picked
                    | switched\s+(?:over\s+)?to
                    | moved\s+(?:over\s+)?to
                    | migrated\s+to
                    | changed\s+to
                    | converted\s+to
                    | transitioned\s+to
                    | jumped\s+(?:ship\s+)?to
                    | started\s+using
                    | have
                    | got
                    | bought
                    | own
                )
                \s+(?P<x>[^,;!?]+)
            ",
            |c, s| {
                let subj = cap(c, "subj").unwrap_or("i");
                let v = cap(c, "v").unwrap_or_default().to_lowercase();
                let x = cap(c, "x").unwrap_or_default();
                let found = lookup(x, s).or_else(|| {
                    // "everything on AWS", "all our stuff in Notion".
                    let xl = x.to_lowercase();
                    let lead = [
                        "everything",
                        "all",
                        "it all",
                        "stuff",
                        "things",
                        "our stuff",
                        "my stuff",
                        "most things",
                        "all our stuff",
                    ];
                    if !lead.iter().any(|l| xl.starts_with(l)) {
                        return None;
                    }
                    [" on ", " in ", " with "]
                        .iter()
                        .find_map(|p| xl.find(p).map(|i| &x[i + p.len()..]))
                        .and_then(|r| lookup(r, s))
                });
                let Some((shown, cat)) = found else { return Vec::new() };
                // In a message typed all in lower case an everyday word is a tool only after a
                // verb that says so: "we're on the go", "i'm on fish tonight" name none.
                let weak = matches!(v.as_str(), "on" | "have" | "got" | "bought" | "own" | "run" | "running" | "main");
                if weak && s.lowercase && AMBIGUOUS.contains(&shown.to_lowercase().as_str()) {
                    return Vec::new();
                }
                let owning = matches!(v.as_str(), "have" | "got" | "bought" | "own");
                if owning && !HARDWARE.contains(&cat) {
                    return Vec::new();
                }
                let mut f = tool_found(subj, &shown, cat);
                if v.contains("switched") || v.contains("moved") || v.contains("migrated") || v.contains("changed") {
                    f.draft.confidence = 0.9;
                }
                vec![f]
            },
        ),
        Rule::new(
            "tool.tool-my-noun",
            Mode::Statement,
            &["my ", "our "],
            r"(?x)
                # e.g. My editor of choice is Helix.
                \b(?P<owner>my|our)\s+(?:
                    (?:
                        main | primary | favou?rite | go-to | daily | current | new | preferred | usual
                        | only | work | personal
                    )
                    \s+
                )*
                (?P<n>
                    (?:text\s+|code\s+)?editor
                    | ide
                    | programming\s+language
                    | operating\s+system
                    | os
                    | (?:linux\s+)?distro
                    | (?:web\s+)?browser
                    | shell
                    | terminal(?:\s+emulator)?
                    | database
                    | db
                    | phone
                    | laptop
                    | computer
                    | machine
                    | keyboard\s+layout
                    | note-?taking\s+app
                    | notes\s+app
                    | task\s+manager
                    | to-?do\s+app
                    | cloud(?:\s+provider)?
                    | music\s+app
                    | password\s+manager
                    | email\s+client
                    | framework
                )
                (?:\s+of\s+choice)?\s+(?:is|has\s+been|will\s+be)\s+(?:now\s+|still\s+)?(?P<x>[^,;!?]+)
            ",
            |c, s| {
                let Some(cat) = cap(c, "n").and_then(category_of_noun) else { return Vec::new() };
                let subj = if cap(c, "owner").is_some_and(|o| o.eq_ignore_ascii_case("our")) { "we" } else { "i" };
                let x = cap(c, "x").unwrap_or_default();
                let shown = match lookup(x, s) {
                    Some((shown, _)) => shown,
                    None => {
                        // Outside the lexicon: accept a capitalised product name ("Fleet", "Kitty").
                        let x = x.trim_start_matches("a ").trim_start_matches("an ").trim_start_matches("the ");
                        let w: Vec<&str> =
                            x.split_whitespace().take_while(|w| w.starts_with(char::is_uppercase)).collect();
                        if w.is_empty() {
                            return Vec::new();
                        }
                        w.join(" ")
                    }
                };
                vec![tool_found(subj, &shown, cat)]
            },
        ),
        Rule::new(
            "tool.tool-is-my-noun",
            Mode::Statement,
            &["my ", "our "],
            r"(?x)
                # e.g. Arch is my distro.
                \b(?P<x>[\w.+\#!-]+(?:\s+[\w.+\#!-]+)?)\s+is\s+(?P<owner>my|our)\s+(?:
                    (?:main|primary|favou?rite|go-to|daily|current|new|preferred|usual|only)\s+
                )*
                (?P<n>
                    (?:text\s+|code\s+)?editor
                    | ide
                    | programming\s+language
                    | operating\s+system
                    | os
                    | (?:linux\s+)?distro
                    | (?:web\s+)?browser
                    | shell
                    | terminal
                    | database
                    | db
                    | phone
                    | laptop
                    | note-?taking\s+app
                    | notes\s+app
                    | task\s+manager
                    | cloud(?:\s+provider)?
                    | music\s+app
                    | password\s+manager
                    | email\s+client
                    | framework
                )
                (?:\s+of\s+choice)?\b
            ",
            |c, s| {
                let Some(cat) = cap(c, "n").and_then(category_of_noun) else { return Vec::new() };
                let subj = if cap(c, "owner").is_some_and(|o| o.eq_ignore_ascii_case("our")) { "we" } else { "i" };
                let x = cap(c, "x").unwrap_or_default();
                // The two words before "is": keep the tool, not a leading filler ("honestly Neovim").
                let found = lookup(x, s).or_else(|| x.split_whitespace().last().and_then(|w| lookup(w, s)));
                let Some((shown, _)) = found else { return Vec::new() };
                vec![tool_found(subj, &shown, cat)]
            },
        ),
        Rule::new(
            "tool.tool-user",
            Mode::Statement,
            &["user", "person", "guy", "girl", "fan", "diehard", "die-hard", "loyalist"],
            r"(?x)
                # e.g. I'm a die-hard Linux user.
                \b<IM>\s+(?:
                    (?:now|still|also|a\s+big|a\s+huge|a\s+total|a\s+lifelong|a\s+longtime)\s+
                )*
                (?:an?\s+)?(?P<x>[\w.+\#!-]+(?:\s+[\w.+\#!-]+)?)\s+(?:user|person|guy|girl|fan|diehard|die-hard|loyalist)\b
            ",
            |c, s| {
                let x = cap(c, "x").unwrap_or_default();
                let found = lookup(x, s).or_else(|| x.split_whitespace().last().and_then(|w| lookup(w, s)));
                let Some((shown, cat)) = found else { return Vec::new() };
                vec![tool_found("i", &shown, cat)]
            },
        ),
    ]
}

/// "switched from A to B" and its kin: a keyed update when either side is a known tool,
/// otherwise a preference that replaces the best match for A.
fn switch(c: &Captures<'_>, s: &Sentence<'_>) -> Vec<Found> {
    let subj = cap(c, "subj").unwrap_or("i");
    let v = cap(c, "v").unwrap_or_default().to_lowercase();
    let a = cap(c, "a").unwrap_or_default();
    let b = cap(c, "b").unwrap_or_default();
    let new = lookup(b, s);
    let old = lookup(a, s);
    let found = match (new, old) {
        (Some((shown, cat)), _) => Some(tool_found(subj, &shown, cat)),
        (None, Some((_, cat))) => {
            let shown = super::lex::head(b).split_whitespace().take(3).collect::<Vec<_>>().join(" ");
            (!shown.is_empty()).then(|| tool_found(subj, &shown, cat))
        }
        (None, None) => {
            // "swapped me edoxaban for apixaban": medicines are the medication family's.
            let first = |t: &str| {
                t.split_whitespace().next().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string())
            };
            let last = |t: &str| {
                t.split_whitespace().last().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string())
            };
            if [last(a), first(b)].iter().flatten().any(|w| super::medication::medicine(w, false)) {
                return Vec::new();
            }
            // "moved from Berlin to Lisbon", "went from X to Y" belong to other families.
            if !matches!(
                v.as_str(),
                "switched" | "migrated" | "swapped" | "replaced" | "ditched" | "traded" | "switching"
            ) {
                return Vec::new();
            }
            let Some(what) = super::lex::phrase(b) else { return Vec::new() };
            let mut f = Found::add(Draft::new(Kind::Preference, format!("User switched to {what}"), 0.85, 0.6));
            f.replaces = super::lex::phrase(a);
            Some(f)
        }
    };
    let Some(mut f) = found else { return Vec::new() };
    f.draft.confidence = f.draft.confidence.max(0.9);
    if let Some(key) = f.draft.key.clone() {
        f.action = Action::Update(Target::Key(key));
        f.replaces = None;
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::extract::heuristic::tests::{keyed, none, only_episodes, run};
    use crate::op::{Action, Target};

    #[test]
    fn tools_are_keyed_by_category() {
        assert_eq!(keyed("I use Neovim for everything", "tool:editor"), Some("Neovim".into()));
        assert_eq!(keyed("i've been using vscode lately", "tool:editor"), Some("vscode".into()));
        assert_eq!(keyed("I mostly code in Rust these days", "tool:language"), Some("Rust".into()));
        assert_eq!(keyed("I'm on Arch btw", "tool:os"), Some("Arch".into()));
        assert_eq!(keyed("My daily driver... my main editor is Helix.", "tool:editor"), Some("Helix".into()));
        assert_eq!(keyed("Obsidian is my go-to notes app", "tool:notes"), Some("Obsidian".into()));
        // All in lower case, an everyday word after a weak verb names no tool.
        assert!(
            crate::extract::heuristic::tests::contents("season opened, wicked fog but we're on the go")
                .iter()
                .all(|c| !c.contains("programming language"))
        );
        assert_eq!(keyed("i mostly code in go these days", "tool:language"), Some("go".into()));
        assert_eq!(keyed("I'm a die-hard Emacs user", "tool:editor"), Some("Emacs".into()));
        assert_eq!(keyed("I have an iPhone 15", "tool:phone"), Some("iPhone 15".into()));
        assert_eq!(keyed("we run everything on AWS", "stack:cloud"), Some("AWS".into()));
    }

    #[test]
    fn switches_update_the_key() {
        for s in [
            "I switched to Neovim.",
            "I finally switched from Vim to Neovim",
            "Switched over from VS Code to Neovim last month",
            "I ditched VS Code for Neovim",
            "I use Neovim now instead of VS Code",
            "these days I use Neovim",
        ] {
            let ops = run(s);
            assert_eq!(ops.len(), 1, "{s}: {ops:?}");
            assert_eq!(ops[0].action, Action::Update(Target::Key("tool:editor".into())), "{s}");
            assert_eq!(ops[0].draft.value.as_deref(), Some("Neovim"), "{s}");
            assert!(ops[0].draft.confidence >= 0.9, "{s}");
        }
        let ops = run("I switched from coffee to green tea");
        assert_eq!(ops.len(), 1);
        assert_eq!(ops[0].action, Action::Update(Target::Matching("coffee".into())));
        assert_eq!(ops[0].draft.content, "User switched to green tea");
    }

    #[test]
    fn ordinary_words_are_not_tools() {
        only_episodes("I use things like lists to stay organised");
        none("I'm on it");
        none("I have a lot of work");
        only_episodes("I'm running late");
    }
}
