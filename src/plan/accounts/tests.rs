//! Planner tests on in-memory facts.
use super::*;
