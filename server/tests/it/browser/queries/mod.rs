//! Every script the browser tests run in the page, each a named query: a test
//! asks `queries::card_idle(root)`, not a string of JavaScript, so that a script
//! that throws, or a wait that runs out, says which question it was.
//!
//! A query returns what the test reads (an object, a list, a flag); the test
//! judges it. Queries that wait ([`Query::wait`]) return null, false or ""
//! until what they wait for is there. They live by what they read: the page
//! as a whole, the run card and its kin, the IPC and latency cards, the labs
//! and the machine page.

mod ipc;
mod labs;
mod page;
mod run;

pub(crate) use ipc::*;
pub(crate) use labs::*;
pub(crate) use page::*;
pub(crate) use run::*;

/// A script to run in the page, with the name a failure reports it by.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    name: String,
    script: String,
}

/// `body`, a query over a card it calls `r`, run on the card at `root`.
pub(crate) fn on(root: &str, body: &Query) -> Query {
    Query::new(
        format!("{} on {root}", body.name()),
        format!(
            "const r = document.querySelector('{root}'); {}",
            body.script()
        ),
    )
}

impl Query {
    /// `name` is what a failure calls it: the query's function and its arguments.
    pub(crate) fn new(name: impl Into<String>, script: impl Into<String>) -> Query {
        Query {
            name: name.into(),
            script: script.into(),
        }
    }

    /// The query's name and arguments, as failures report it.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The JavaScript, a function body (it `return`s what it reads).
    pub(crate) fn script(&self) -> &str {
        &self.script
    }
}
