//! The request log and inspector: what is recorded equals what the server received,
//! secrets stay out, the log stays small, and the inspector's views and commands.

mod binary;
mod e2e;
mod size;
mod streamed;
mod wire;
