//! Reading JSONL message files: every line is checked before anything is ingested.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use anyhow::{Context, Result, bail};
use mnemo::core::NewMessage;

/// Parses a JSONL file of messages; a malformed line is an error naming the file and line.
pub(crate) fn read_jsonl(path: &Path) -> Result<Vec<NewMessage>> {
    let reader: Box<dyn Read> = if path == Path::new("-") {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?)
    };
    let mut out = Vec::new();
    for (i, line) in BufReader::new(reader).lines().enumerate() {
        let line = line.with_context(|| format!("{}: cannot read line {}", path.display(), i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let msg: NewMessage = serde_json::from_str(&line).with_context(|| {
            format!(
                "{}:{}: not a message: expected {{\"role\": \"user\"|\"assistant\"|..., \"content\": \"...\", \"id\"?: \"...\", \"at\"?: RFC 3339}}",
                path.display(),
                i + 1
            )
        })?;
        out.push(msg);
    }
    if out.is_empty() {
        bail!("{}: no messages found", path.display());
    }
    Ok(out)
}
