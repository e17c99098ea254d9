//! A structural outline of source code without a parser or a model: imports, then the
//! signatures of types, functions and members in file order, bodies left out. It is the L1 of
//! a code document ([`crate::document`]): what an agent needs to know a file's shape is its
//! names and signatures, at a tenth of the file's tokens.
//!
//! Recognition is line by line, by each language's leading keywords (Rust, Python,
//! TypeScript/JavaScript, Go). It is wrong on exotic layouts and never fails: a line it does
//! not recognise is simply not in the outline.

use crate::tokens;

/// Languages the outline recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// `.rs`
    Rust,
    /// `.py`
    Python,
    /// `.ts`, `.tsx`, `.js`, `.jsx`, `.mjs`, `.cjs`
    TypeScript,
    /// `.go`
    Go,
}

/// Lines sniffed for the language of a text whose source names none.
const SNIFF_LINES: usize = 400;

/// Most lines one signature may span (arguments written one per line).
const SIGNATURE_LINES: usize = 12;

/// Deepest indentation (in columns) of a recognised item: top level and one level of members.
const MEMBER_INDENT: usize = 4;

/// Keywords that open a line which is not a member declaration though it looks like a call.
const NOT_MEMBERS: &[&str] =
    &["if", "for", "while", "switch", "catch", "return", "super", "await", "new", "throw", "else", "do", "try"];

impl Language {
    /// The language, by the source's file extension, else by sniffing the text: the language
    /// whose items are recognised on at least three lines and one in twenty non-empty lines.
    pub fn detect(source: &str, text: &str) -> Option<Language> {
        let path = source.split(['?', '#']).next().unwrap_or_default();
        let file = path.rsplit(['/', '\\']).next().unwrap_or_default();
        if let Some((_, ext)) = file.rsplit_once('.') {
            match ext.to_ascii_lowercase().as_str() {
                "rs" => return Some(Language::Rust),
                "py" | "pyi" => return Some(Language::Python),
                "ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs" => return Some(Language::TypeScript),
                "go" => return Some(Language::Go),
                _ => {}
            }
        }
        let head: String = text.lines().take(SNIFF_LINES).collect::<Vec<_>>().join("\n");
        let non_empty = head.lines().filter(|l| !l.trim().is_empty()).count();
        [Language::Rust, Language::Python, Language::TypeScript, Language::Go]
            .into_iter()
            .map(|lang| (lang, outline(lang, &head).len()))
            .filter(|&(_, n)| n >= 3 && n * 20 >= non_empty)
            .max_by_key(|&(_, n)| n)
            .map(|(lang, _)| lang)
    }

    /// Its name in words.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::TypeScript => "TypeScript",
            Language::Go => "Go",
        }
    }
}

/// The outline of `text`: one line of imports (`imports: a; b`) when there are any, then one
/// line per recognised item, members indented by two spaces.
pub fn outline(lang: Language, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut imports = Vec::new();
    let mut items = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (indent, line) = indent_of(lines[i]);
        let found = match lang {
            Language::Rust => rust(indent, line),
            Language::Python => python(indent, line),
            Language::TypeScript => typescript(indent, line),
            Language::Go => go(indent, line),
        };
        // A Go import block lists one path a line until ")".
        if lang == Language::Go && line == "import (" {
            let block = lines[i + 1..].iter().take_while(|l| l.trim() != ")");
            imports.extend(block.map(|l| l.trim().trim_matches('"').to_string()).filter(|l| !l.is_empty()));
        }
        let Some(item) = found else {
            i += 1;
            continue;
        };
        let (text, used) = signature(&lines[i..], item.ends);
        let text = item.cut.map_or(text.clone(), |c| cut_at(&text, c));
        match item.import {
            true => imports.push(import_name(lang, &text)),
            false => items.push(format!("{}{}", if indent > 0 { "  " } else { "" }, text)),
        }
        i += used.max(1);
    }
    let mut out = Vec::new();
    if !imports.is_empty() {
        out.push(format!("imports: {}", imports.join("; ")));
    }
    out.extend(items);
    out
}

/// `lines` joined in order while they fit in `budget` tokens, then a line saying how many
/// were left out.
///
/// Each line is counted only up to the room left ([`tokens::count_at_most`]): a document may be
/// one huge line ("{{{{…" or "####…"), and encoding an unbroken run whole costs time quadratic
/// in its length, while the budget bounds what any line can be worth here.
pub fn within(lines: &[String], budget: usize) -> String {
    let room = budget.saturating_sub(8);
    let mut used = 0;
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        // A line costs its tokens plus its newline (`tokens::line_cost`).
        let fits = room.checked_sub(used + 1).and_then(|left| tokens::count_at_most(line, left));
        let Some(cost) = fits.map(|c| c + 1) else {
            out.push(format!("… ({} more lines)", lines.len() - n));
            break;
        };
        used += cost;
        out.push(line.clone());
    }
    out.join("\n")
}

/// The names an outline declares (functions, types, classes), in order, for a gist line.
pub fn names(outline: &[String]) -> Vec<String> {
    const KEYWORDS: &[&str] =
        &["fn", "struct", "enum", "trait", "type", "mod", "def", "class", "interface", "function", "func", "union"];
    let mut out = Vec::new();
    for line in outline.iter().filter(|l| !l.starts_with("imports: ") && !l.starts_with(' ')) {
        let mut words = line.split_whitespace().peekable();
        while let Some(w) = words.next() {
            if !KEYWORDS.contains(&w) {
                continue;
            }
            // A Go method names its receiver first: `func (s *Server) Serve(...)`.
            let mut next = words.next().unwrap_or_default();
            if next.starts_with('(') {
                next = words.find(|w| w.ends_with(')')).and_then(|_| words.next()).unwrap_or_default();
            }
            let name: String = next.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && !out.contains(&name) {
                out.push(name);
            }
            break;
        }
    }
    out
}

/// How a recognised line's signature ends and what to keep of it.
struct Item {
    /// The characters that end the signature (it may span lines until one of them).
    ends: &'static [char],
    /// Keep only what comes before this text (a constant's value, a Python colon).
    cut: Option<&'static str>,
    /// An import rather than a declaration.
    import: bool,
}

const fn decl(ends: &'static [char]) -> Option<Item> {
    Some(Item { ends, cut: None, import: false })
}

const fn import(ends: &'static [char]) -> Option<Item> {
    Some(Item { ends, cut: None, import: true })
}

/// Columns of leading whitespace (a tab is four) and the rest of the line, trimmed.
fn indent_of(line: &str) -> (usize, &str) {
    let rest = line.trim_start();
    let lead = &line[..line.len() - rest.len()];
    (lead.chars().map(|c| if c == '\t' { 4 } else { 1 }).sum(), rest.trim_end())
}

/// The signature that starts at `lines[0]`: up to the first ending character (dropped: it
/// opens a body or closes a statement), whitespace collapsed; and the lines it spans. `\n` ends
/// it at the end of a line; a `:` only at the end of a line (Python: annotations hold colons).
fn signature(lines: &[&str], ends: &[char]) -> (String, usize) {
    let mut text = String::new();
    for (n, line) in lines.iter().take(SIGNATURE_LINES).enumerate() {
        let line = line.trim();
        if !text.is_empty() && !text.ends_with('(') && !line.starts_with(')') {
            text.push(' ');
        }
        let at = match ends {
            [':'] => line.ends_with(':').then(|| line.len() - 1),
            _ => line.find(ends),
        };
        if let Some(at) = at.or_else(|| ends.contains(&'\n').then_some(line.len())) {
            text.push_str(&line[..at]);
            return (text.trim_end().to_string(), n + 1);
        }
        text.push_str(line);
    }
    (lines[0].trim().to_string(), 1)
}

fn cut_at(text: &str, cut: &str) -> String {
    text.split(cut).next().unwrap_or(text).trim_end().to_string()
}

/// `rest` after any of `prefixes`, repeatedly (visibility and qualifiers in any order).
fn strip<'a>(mut rest: &'a str, prefixes: &[&str]) -> &'a str {
    while let Some(p) = prefixes.iter().find(|p| rest.starts_with(**p)) {
        rest = rest[p.len()..].trim_start();
    }
    rest
}

/// The word `rest` starts with and what follows it.
fn keyword(rest: &str) -> (&str, &str) {
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!')).unwrap_or(rest.len());
    (&rest[..end], &rest[end..])
}

fn rust(indent: usize, line: &str) -> Option<Item> {
    if indent > MEMBER_INDENT {
        return None;
    }
    let rest = strip(
        line,
        &["pub(crate) ", "pub(super) ", "pub(self) ", "pub ", "async ", "unsafe ", "extern \"C\" ", "default "],
    );
    let rest = if rest.starts_with("pub(in ") { rest.split_once(") ").map_or(rest, |(_, r)| r) } else { rest };
    let (word, after) = keyword(rest);
    match word {
        "use" if indent == 0 && (line.ends_with(';') || line.ends_with('{')) => import(&[';']),
        "fn" if after.contains('(') || after.trim_end().ends_with('<') => decl(&['{', ';']),
        "const" if after.trim_start().starts_with("fn ") => decl(&['{', ';']),
        "struct" | "enum" | "trait" | "union" | "impl" | "mod" | "type" | "macro_rules!"
            if !after.trim().is_empty() =>
        {
            decl(&['{', ';'])
        }
        "const" | "static" if after.contains(':') => Some(Item { ends: &[';'], cut: Some(" ="), import: false }),
        _ => None,
    }
}

fn python(indent: usize, line: &str) -> Option<Item> {
    if indent > MEMBER_INDENT {
        return None;
    }
    let rest = strip(line, &["async "]);
    let (word, after) = keyword(rest);
    let dotted =
        |s: &str| !s.is_empty() && s.split([',', ' ', '.']).all(|w| w.chars().all(|c| c.is_alphanumeric() || c == '_'));
    match word {
        "import" if indent == 0 && dotted(after.trim()) => import(&['\n']),
        "from" if indent == 0 && after.contains(" import ") => import(&['\n']),
        "def" if after.contains('(') => decl(&[':']),
        "class" if line.ends_with(':') || after.contains('(') => decl(&[':']),
        "__all__" if indent == 0 => decl(&['\n']),
        _ => None,
    }
}

fn typescript(indent: usize, line: &str) -> Option<Item> {
    if indent > MEMBER_INDENT {
        return None;
    }
    let (word, after) = keyword(line);
    match word {
        "import" if indent == 0 && (after.contains(" from ") || after.trim_start().starts_with(['\'', '"', '{'])) => {
            import(&[';', '\n'])
        }
        "export" if indent == 0 => {
            let (next, _) = keyword(after.trim_start());
            let known = [
                "default",
                "const",
                "let",
                "var",
                "function",
                "class",
                "interface",
                "type",
                "enum",
                "async",
                "abstract",
                "declare",
                "namespace",
            ];
            let bare = after.trim_start().starts_with(['{', '*']);
            (known.contains(&next) || bare).then(|| value_cut(after)).flatten()
        }
        "function" | "class" | "interface" | "enum" | "namespace" | "declare" | "abstract" if indent == 0 => {
            decl(&['{', ';'])
        }
        "async" if indent == 0 && after.trim_start().starts_with("function") => decl(&['{', ';']),
        "type" if indent == 0 && after.contains('=') => decl(&[';', '\n']),
        "const" | "let" | "var" if indent == 0 && after.contains("=>") => decl(&['{', ';']),
        "module" | "exports" if indent == 0 && line.contains("exports") => {
            Some(Item { ends: &['{', ';'], cut: Some(" = "), import: false })
        }
        _ if indent > 0 => member(line),
        _ => None,
    }
}

/// What to keep of an `export` line: a constant's value goes, a function keeps its signature.
fn value_cut(after: &str) -> Option<Item> {
    let (next, _) = keyword(after.trim_start());
    let value = matches!(next, "const" | "let" | "var") && !after.contains("=>");
    Some(Item { ends: &['{', ';'], cut: value.then_some(" = "), import: false })
}

/// A class member: optional modifiers, a name, then `(` or `<`, ending in a body or `;`.
fn member(line: &str) -> Option<Item> {
    let rest = strip(
        line,
        &[
            "public ",
            "private ",
            "protected ",
            "static ",
            "async ",
            "readonly ",
            "get ",
            "set ",
            "abstract ",
            "override ",
            "*",
        ],
    );
    let (name, after) = keyword(rest);
    let opens = after.starts_with('(') || after.starts_with('<');
    // A body opens on the line (a call statement ends in `;` and is not a member).
    let ends = line.ends_with('{') || line.ends_with('(');
    (!name.is_empty() && opens && ends && !NOT_MEMBERS.contains(&name) && !name.contains('!')).then_some(Item {
        ends: &['{', ';'],
        cut: None,
        import: false,
    })
}

fn go(indent: usize, line: &str) -> Option<Item> {
    if indent > 0 {
        return None;
    }
    let (word, after) = keyword(line);
    match word {
        "package" if keyword(after.trim()).0 == after.trim() && !after.trim().is_empty() => decl(&['\n']),
        "import" if after.trim() != "(" && after.contains('"') => import(&['\n']),
        "func" if after.contains('(') => decl(&['{']),
        "type" if !after.trim().is_empty() => decl(&['{', '\n']),
        "const" | "var" if !after.trim().starts_with('(') && !after.trim().is_empty() => {
            Some(Item { ends: &['\n'], cut: Some(" ="), import: false })
        }
        _ => None,
    }
}

/// An import statement as a short name: Rust `std::fmt`, Python `os.path`, a JS module path,
/// a Go package path.
fn import_name(lang: Language, text: &str) -> String {
    let t = text.trim().trim_end_matches(';');
    match lang {
        Language::Rust => t.trim_start_matches("pub ").trim_start_matches("use ").to_string(),
        Language::Python => t.to_string(),
        Language::TypeScript => match t.rsplit_once(" from ") {
            Some((_, module)) => module.trim().trim_matches(['\'', '"']).to_string(),
            None => t.trim_start_matches("import ").trim().trim_matches(['\'', '"']).to_string(),
        },
        Language::Go => t.trim_start_matches("import ").trim().trim_matches('"').to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUST: &str = r#"//! A store.
use std::collections::HashMap;
use serde::{Deserialize, Serialize};

/// A key.
#[derive(Debug)]
pub struct Key(String);

pub enum Mode {
    Fast,
}

pub trait Store {
    fn get(&self, key: &Key) -> Option<String>;
}

impl Store for Memory {
    fn get(&self, key: &Key) -> Option<String> {
        let inner = |x: i32| x + 1;
        if true { None } else { None }
    }
}

pub const LIMIT: usize = 10;

pub(crate) async fn load(
    path: &Path,
    strict: bool,
) -> Result<Memory> {
    Ok(Memory::open(path, strict)?)
}
"#;

    #[test]
    fn rust_outline_keeps_imports_types_and_signatures_without_bodies() {
        let o = outline(Language::Rust, RUST);
        assert_eq!(
            o,
            [
                "imports: std::collections::HashMap; serde::{Deserialize, Serialize}",
                "pub struct Key(String)",
                "pub enum Mode",
                "pub trait Store",
                "  fn get(&self, key: &Key) -> Option<String>",
                "impl Store for Memory",
                "  fn get(&self, key: &Key) -> Option<String>",
                "pub const LIMIT: usize",
                "pub(crate) async fn load(path: &Path, strict: bool,) -> Result<Memory>",
            ]
        );
        assert_eq!(names(&o), ["Key", "Mode", "Store", "load"]);
    }

    #[test]
    fn python_outline_keeps_classes_methods_and_imports() {
        let py = "import os\nfrom typing import List\n\n__all__ = ['Cache']\n\nclass Cache(Base):\n    \"\"\"Doc.\"\"\"\n\n    def get(self, key: str) -> str:\n        if key:\n            return key\n\n    async def warm(self):\n        pass\n\ndef helper(a,\n           b=2):\n    return a\n";
        assert_eq!(
            outline(Language::Python, py),
            [
                "imports: import os; from typing import List",
                "__all__ = ['Cache']",
                "class Cache(Base)",
                "  def get(self, key: str) -> str",
                "  async def warm(self)",
                "def helper(a, b=2)",
            ]
        );
    }

    #[test]
    fn typescript_outline_keeps_exports_classes_and_members() {
        let ts = "import { readFile } from 'fs';\nimport React from \"react\";\n\nexport interface Options {\n  depth: number;\n}\n\nexport const VERSION = \"1.2\";\n\nexport class Walker {\n  private seen: Set<string>;\n  constructor(opts: Options) {\n    if (opts.depth) {\n      this.go();\n    }\n  }\n  async walk(root: string): Promise<string[]> {\n    return [];\n  }\n}\n\nexport default function main(argv: string[]): number {\n  return 0;\n}\n\nconst add = (a: number, b: number) => a + b;\n";
        assert_eq!(
            outline(Language::TypeScript, ts),
            [
                "imports: fs; react",
                "export interface Options",
                "export const VERSION",
                "export class Walker",
                "  constructor(opts: Options)",
                "  async walk(root: string): Promise<string[]>",
                "export default function main(argv: string[]): number",
                "const add = (a: number, b: number) => a + b",
            ]
        );
    }

    #[test]
    fn go_outline_keeps_package_imports_types_and_funcs() {
        let go = "package server\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\ntype Server struct {\n\tAddr string\n}\n\nconst Timeout = 30\n\nfunc (s *Server) Serve(w http.ResponseWriter, r *http.Request) {\n\tfmt.Println(r)\n}\n\nfunc New(addr string) *Server {\n\treturn &Server{Addr: addr}\n}\n";
        let o = outline(Language::Go, go);
        assert_eq!(
            o,
            [
                "imports: fmt; net/http",
                "package server",
                "type Server struct",
                "const Timeout",
                "func (s *Server) Serve(w http.ResponseWriter, r *http.Request)",
                "func New(addr string) *Server",
            ]
        );
        assert_eq!(names(&o), ["Server", "Serve", "New"]);
    }

    #[test]
    fn the_language_comes_from_the_extension_else_from_the_text() {
        assert_eq!(Language::detect("https://x.io/a/b.tsx?raw=1", ""), Some(Language::TypeScript));
        assert_eq!(Language::detect("C:\\src\\main.GO", ""), Some(Language::Go));
        assert_eq!(Language::detect("", RUST), Some(Language::Rust));
        let prose = "Use the hammer to fix it.\nImport duties are high.\nThe type of the thing matters.\n";
        assert_eq!(Language::detect("notes.md", prose), None);
    }

    #[test]
    fn within_cuts_at_the_budget_and_says_how_much_is_left() {
        let lines: Vec<String> = (0..100).map(|i| format!("fn item_{i}(a: i32) -> i32")).collect();
        let text = within(&lines, 60);
        assert!(tokens::count(&text) <= 60, "{text}");
        assert!(text.ends_with("more lines)"), "{text}");
    }
}
