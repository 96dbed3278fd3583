//! The online chess server.
