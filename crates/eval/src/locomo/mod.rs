//! The LoCoMo benchmark harness (`mnemo bench locomo`): how much of the evidence a question needs
//! reaches the prompt, on ten long conversations nobody here wrote, against a BM25 baseline.
//!
//! [`Dataset::load`] reads the file at run time; [`run_locomo`] ingests each conversation into
//! its own store and asks every question through the real `context()` and `recall()`;
//! [`LocomoReport`] turns the run into JSON and a text table. [`run_extraction`] measures what
//! extraction keeps against the dataset's own observations and events (`mnemo bench extract`).

mod bm25;
mod data;
mod error;
mod extraction;
mod harness;
mod metrics;
mod report;
mod sources;

pub use bm25::{Bm25, tokenize};
pub use data::{
    Conversation, Dataset, EventNote, FormatError, Observation, Question, Session, Turn, TurnRendering,
    normalise_dia_id, parse_date, parse_date_time,
};
pub use error::LocomoError;
pub use extraction::{
    ConversationExtraction, CosineDistribution, ExtractionOptions, ExtractionReport, MATCH_COSINE, MissedObservation,
    Share, UnmatchedMemory, as_user, counted, run_extraction,
};
pub use harness::{ConversationStats, LocomoOptions, LocomoRun, Progress, QuestionOutcome, TENANT, run_locomo};
pub use metrics::{Coverage, Hit, OVERALL_CATEGORIES, Summary, category_name};
pub use report::{ByCategory, LocomoReport, SystemNumbers};
pub use sources::{block_sources, recall_sources};
