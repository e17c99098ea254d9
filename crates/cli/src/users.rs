//! `mnemo user`: a user's privacy switches (pause, resume, disable, enable) and where they stand.

use anyhow::Result;
use clap::{Args, Subcommand};
use mnemo::core::UserState;
use mnemo::{Memory, Scope};

/// Which user: the switch is the person's, across every agent and chat of the tenant.
#[derive(Args, Debug, Clone)]
pub(crate) struct UserArgs {
    /// Tenant (organisation).
    #[arg(long, env = "MNEMO_TENANT", default_value = "default")]
    tenant: String,
    /// The user.
    #[arg(long, env = "MNEMO_USER")]
    user: String,
    /// Print JSON (`{"user_id": ..., "state": ...}`).
    #[arg(long)]
    json: bool,
}

/// The `mnemo user` subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum UserCommand {
    /// Pause: keep what is known, but learn nothing from new messages (they stay in the
    /// conversation, never extracted or quoted back) and recall nothing until resumed.
    Pause(UserArgs),
    /// End a pause (or a disable): the user is active again.
    Resume(UserArgs),
    /// Disable: store nothing of the user's at all and recall nothing until enabled.
    Disable(UserArgs),
    /// Enable a disabled user again.
    Enable(UserArgs),
    /// Show where the user stands: active, paused or disabled.
    Show(UserArgs),
}

/// Runs one `mnemo user` subcommand and prints the user's state.
pub(crate) fn run(which: &UserCommand, memory: &Memory) -> Result<()> {
    let (who, to) = match which {
        UserCommand::Pause(a) => (a, Some(UserState::Paused)),
        UserCommand::Resume(a) | UserCommand::Enable(a) => (a, Some(UserState::Active)),
        UserCommand::Disable(a) => (a, Some(UserState::Disabled)),
        UserCommand::Show(a) => (a, None),
    };
    let scope = Scope::parse(&who.tenant, None, Some(&who.user), None)?;
    let state = match to {
        Some(s) => memory.set_user_state(&scope, s)?,
        None => memory.user_state(&scope)?,
    };
    if who.json {
        println!("{}", serde_json::json!({"user_id": who.user, "state": state}));
    } else {
        println!("user {} of tenant {}: {state}", who.user, who.tenant);
    }
    Ok(())
}
