//! The LoCoMo benchmark harness (`mnemo bench locomo`): whether what a question needs reaches
//! the prompt, read from the text of the block the application receives, on ten long
//! conversations nobody here wrote, against three baselines over whole turns (BM25, dense,
//! their fusion) packed into the same token budget.
//!
//! [`Dataset::load`] reads the file at run time; [`run_locomo`] ingests each conversation into
//! its own store and asks every question through the real `context()` and `recall()`;
//! [`LocomoReport`] turns the run into JSON, a text table and a dump of the blocks. The text
//! metrics are defined in [`textscore`] and `docs/locomo-metrics.md`. [`run_extraction`]
//! measures what extraction keeps against the dataset's own observations and events
//! (`mnemo bench extract`).

mod baselines;
mod bm25;
mod data;
mod error;
mod extraction;
mod harness;
mod metrics;
mod report;
mod sources;
pub mod textscore;

pub use baselines::{EMBED_BATCH, RRF_K};
pub use bm25::{Bm25, tokenize};
pub use data::{
    Conversation, Dataset, EventNote, FormatError, Observation, Question, Session, Speakers, Turn, TurnRendering,
    normalise_dia_id, parse_date, parse_date_time,
};
pub use error::LocomoError;
pub use extraction::{
    ConversationExtraction, CosineDistribution, ExtractionOptions, ExtractionReport, ListedMemory, MATCH_COSINE,
    MissedObservation, Share, as_user, counted, run_extraction,
};
pub use harness::{
    BudgetOutcome, ConversationStats, LocomoOptions, LocomoRun, Progress, QuestionOutcome, ScoredBlock, TENANT,
    run_locomo,
};
pub use metrics::{HeadToHead, Hit, Means, OVERALL_CATEGORIES, Referenced, Summary, System, TextMetric, category_name};
pub use report::{ByCategory, Headline, LocomoReport, SystemNumbers};
pub use sources::{block_sources, recall_sources};
