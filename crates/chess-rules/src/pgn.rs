//! PGN export and import. OWNER: rules-text helper.
