//! Attaching to a served session: several clients on one session, and the fences that
//! keep everyone else out.

mod clients;
mod hostile;
mod pump;
mod security;
mod terminal;
