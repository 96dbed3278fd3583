//! Colours, colour differences and colour preferences (C.04.3 A.6), and the
//! colour allocation rules E.1-E.5.

/// A side of the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Colour {
    White,
    Black,
}

impl Colour {
    /// The other colour.
    #[must_use]
    pub fn opposite(self) -> Colour {
        match self {
            Colour::White => Colour::Black,
            Colour::Black => Colour::White,
        }
    }
}

/// How much a player wants a colour (A.6). The order is the order of
/// strength: E.2 grants the stronger preference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Strength {
    /// Colour difference 0: alternate from the last game played.
    Mild,
    /// Colour difference +1 or -1.
    Strong,
    /// Colour difference beyond +-1, or the same colour in the two latest
    /// games played.
    Absolute,
}

/// A player's colour preference for the round being paired; `None` for a
/// player who has not played a game yet (A.6.d: such a player takes what
/// the opponent wants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Preference {
    pub colour: Colour,
    pub strength: Strength,
}

/// The colours of the games a player has actually played, oldest first
/// (unplayed rounds, forfeits included, are left out, as C.04.2 D.5 asks).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ColourHistory {
    pub played: Vec<Colour>,
}

impl ColourHistory {
    /// Games with White minus games with Black (A.6).
    #[must_use]
    pub fn difference(&self) -> i32 {
        self.played
            .iter()
            .map(|colour| match colour {
                Colour::White => 1,
                Colour::Black => -1,
            })
            .sum()
    }

    /// The preference A.6 gives this history.
    #[must_use]
    pub fn preference(&self) -> Option<Preference> {
        let last = *self.played.last()?;
        let difference = self.difference();
        let twice = self.played.len() >= 2 && self.played[self.played.len() - 2] == last;
        let (colour, strength) = if difference > 1 {
            (Colour::Black, Strength::Absolute)
        } else if difference < -1 {
            (Colour::White, Strength::Absolute)
        } else if twice {
            (last.opposite(), Strength::Absolute)
        } else if difference == 1 {
            (Colour::Black, Strength::Strong)
        } else if difference == -1 {
            (Colour::White, Strength::Strong)
        } else {
            (last.opposite(), Strength::Mild)
        };
        Some(Preference { colour, strength })
    }

    /// Whether playing `colour` next would give this player the same colour
    /// three times running (C.9).
    #[must_use]
    pub fn third_in_a_row(&self, colour: Colour) -> bool {
        let n = self.played.len();
        n >= 2 && self.played[n - 1] == colour && self.played[n - 2] == colour
    }

    /// The colour difference after playing `colour` next.
    #[must_use]
    pub fn difference_after(&self, colour: Colour) -> i32 {
        self.difference()
            + match colour {
                Colour::White => 1,
                Colour::Black => -1,
            }
    }
}

/// What the colour rules need to know of one player of a pair.
#[derive(Clone, Copy, Debug)]
pub struct ColourSide<'a> {
    pub history: &'a ColourHistory,
    pub preference: Option<Preference>,
    /// A topscorer (A.7): only then do two absolute preferences meet, and
    /// E.2 looks at the wider colour difference.
    pub topscorer: bool,
    pub pairing_number: u32,
}

/// The colour the higher-ranked player `higher` gets against `lower`, by
/// E.1-E.5 in their order. `initial` is the colour drawn for the
/// odd-numbered higher-ranked players (E.5).
#[must_use]
pub fn allocate(higher: ColourSide<'_>, lower: ColourSide<'_>, initial: Colour) -> Colour {
    match (higher.preference, lower.preference) {
        // E.1: both preferences can be granted.
        (Some(h), Some(l)) if h.colour != l.colour => return h.colour,
        (Some(h), None) => return h.colour,
        (None, Some(l)) => return l.colour.opposite(),
        (Some(h), Some(l)) => {
            // E.2: the stronger preference; between two absolute ones
            // (topscorers only), the wider colour difference.
            if h.strength != l.strength {
                return if h.strength > l.strength {
                    h.colour
                } else {
                    h.colour.opposite()
                };
            }
            if h.strength == Strength::Absolute {
                let (dh, dl) = (
                    higher.history.difference().abs(),
                    lower.history.difference().abs(),
                );
                if dh != dl {
                    return if dh > dl {
                        h.colour
                    } else {
                        h.colour.opposite()
                    };
                }
            }
        }
        (None, None) => {}
    }
    // E.3: alternate from the most recent game in which the two had
    // different colours, the histories compared from their latest games.
    let (hp, lp) = (&higher.history.played, &lower.history.played);
    for (h, l) in hp.iter().rev().zip(lp.iter().rev()) {
        if h != l {
            return h.opposite();
        }
    }
    // E.4: the higher-ranked player's preference.
    if let Some(h) = higher.preference {
        return h.colour;
    }
    // E.5: the pairing number's parity.
    if higher.pairing_number % 2 == 1 {
        initial
    } else {
        initial.opposite()
    }
}
