//! A 200-turn session's request log stays under twice the size of its session file:
//! each request stores only what is new since the agent's previous one.
