//! Why a command was refused. A refused command changes nothing.

use std::fmt;

/// A command the game refused, with a stable machine code ([`GameError::code`])
/// for clients and a lowercase human message (`Display`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameError {
    /// The game is over; only rematch commands are accepted.
    GameOver,
    /// A rematch command before the game ended.
    GameNotOver,
    /// It is the other side's turn.
    NotYourTurn,
    /// The move was meant for another ply than the one to be played.
    WrongPly { expected: u32, got: u32 },
    /// The text is not UCI move syntax.
    InvalidUci(String),
    /// The move is not legal in the current position.
    IllegalMove(String),
    /// Both sides have moved: resign instead of aborting.
    AbortNotAllowed,
    /// Fewer than two moves were played: abort instead of resigning.
    ResignNotAllowedYet,
    /// Draw offers are possible only once both sides have moved.
    DrawOfferTooEarly,
    /// The player's last offer was declined or withdrawn too recently.
    DrawOfferCooldown { moves_left: u32 },
    /// The player's own draw offer is already open.
    DrawAlreadyOffered,
    /// There is no draw offer from the opponent to accept or decline.
    NoDrawOffer,
    /// The player has no open draw offer to withdraw.
    NoOwnDrawOffer,
    /// A premove is set only during the opponent's turn.
    PremoveOnOwnTurn,
    /// The premove does not follow the piece's movement pattern.
    InvalidPremove(String),
    /// A promotion piece given where none belongs, or a king or pawn.
    InvalidPromotion(String),
    /// The player has no premove to cancel.
    NoPremove,
    /// Take-back is not allowed in this game.
    TakebackNotAllowed,
    /// Not enough moves on the board to take back.
    NothingToTakeBack,
    /// The player's rematch offer is already open.
    RematchAlreadyOffered,
    /// There is no rematch offer from the opponent to accept or decline.
    NoRematchOffer,
    /// The player has no open rematch offer to withdraw.
    NoOwnRematchOffer,
    /// The rematch was already accepted.
    RematchAlreadyAccepted,
    /// Berserk is not allowed in this game, or no longer (after the first
    /// two plies), or there is no initial time to halve.
    BerserkNotAllowed,
    /// The player has berserked already.
    AlreadyBerserk,
    /// A tournament's game cannot be aborted: resign instead.
    MustBePlayed,
    /// A tournament's game has no rematch: the tournament pairs its players.
    NoRematchInTournament,
}

impl GameError {
    /// A stable snake_case code for clients.
    pub const fn code(&self) -> &'static str {
        match self {
            GameError::GameOver => "game_over",
            GameError::GameNotOver => "game_not_over",
            GameError::NotYourTurn => "not_your_turn",
            GameError::WrongPly { .. } => "wrong_ply",
            GameError::InvalidUci(_) => "invalid_uci",
            GameError::IllegalMove(_) => "illegal_move",
            GameError::AbortNotAllowed => "abort_not_allowed",
            GameError::ResignNotAllowedYet => "resign_not_allowed_yet",
            GameError::DrawOfferTooEarly => "draw_offer_too_early",
            GameError::DrawOfferCooldown { .. } => "draw_offer_cooldown",
            GameError::DrawAlreadyOffered => "draw_already_offered",
            GameError::NoDrawOffer => "no_draw_offer",
            GameError::NoOwnDrawOffer => "no_own_draw_offer",
            GameError::PremoveOnOwnTurn => "premove_on_own_turn",
            GameError::InvalidPremove(_) => "invalid_premove",
            GameError::InvalidPromotion(_) => "invalid_promotion",
            GameError::NoPremove => "no_premove",
            GameError::TakebackNotAllowed => "takeback_not_allowed",
            GameError::NothingToTakeBack => "nothing_to_take_back",
            GameError::RematchAlreadyOffered => "rematch_already_offered",
            GameError::NoRematchOffer => "no_rematch_offer",
            GameError::NoOwnRematchOffer => "no_own_rematch_offer",
            GameError::RematchAlreadyAccepted => "rematch_already_accepted",
            GameError::BerserkNotAllowed => "berserk_not_allowed",
            GameError::AlreadyBerserk => "already_berserk",
            GameError::MustBePlayed => "must_be_played",
            GameError::NoRematchInTournament => "no_rematch_in_tournament",
        }
    }
}

impl fmt::Display for GameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameError::GameOver => f.write_str("the game is over"),
            GameError::GameNotOver => f.write_str("the game is not over yet"),
            GameError::NotYourTurn => f.write_str("it is not your turn"),
            GameError::WrongPly { expected, got } => {
                write!(
                    f,
                    "move meant for ply {got}, but ply {expected} is to be played"
                )
            }
            GameError::InvalidUci(text) => write!(f, "not a uci move: {text:?}"),
            GameError::IllegalMove(uci) => write!(f, "illegal move: {uci}"),
            GameError::AbortNotAllowed => {
                f.write_str("both sides have moved: the game can no longer be aborted")
            }
            GameError::ResignNotAllowedYet => {
                f.write_str("both sides must move before resigning: abort instead")
            }
            GameError::DrawOfferTooEarly => {
                f.write_str("a draw can be offered only once both sides have moved")
            }
            GameError::DrawOfferCooldown { moves_left } => write!(
                f,
                "make {moves_left} more move(s) before offering a draw again"
            ),
            GameError::DrawAlreadyOffered => f.write_str("your draw offer is already open"),
            GameError::NoDrawOffer => f.write_str("there is no draw offer from your opponent"),
            GameError::NoOwnDrawOffer => f.write_str("you have no open draw offer"),
            GameError::PremoveOnOwnTurn => {
                f.write_str("a premove can be set only during your opponent's turn")
            }
            GameError::InvalidPremove(uci) => {
                write!(
                    f,
                    "premove {uci} does not follow the piece's movement pattern"
                )
            }
            GameError::InvalidPromotion(uci) => write!(f, "invalid promotion in premove {uci}"),
            GameError::NoPremove => f.write_str("you have no premove to cancel"),
            GameError::TakebackNotAllowed => f.write_str("take-back is not allowed in this game"),
            GameError::NothingToTakeBack => f.write_str("there is no move to take back"),
            GameError::RematchAlreadyOffered => f.write_str("your rematch offer is already open"),
            GameError::NoRematchOffer => {
                f.write_str("there is no rematch offer from your opponent")
            }
            GameError::NoOwnRematchOffer => f.write_str("you have no open rematch offer"),
            GameError::RematchAlreadyAccepted => f.write_str("the rematch was already accepted"),
            GameError::BerserkNotAllowed => f.write_str(
                "berserk is possible only in an arena game that allows it, before both sides move",
            ),
            GameError::AlreadyBerserk => f.write_str("you have berserked already"),
            GameError::MustBePlayed => {
                f.write_str("a tournament game cannot be aborted: resign instead")
            }
            GameError::NoRematchInTournament => {
                f.write_str("a tournament game has no rematch: the tournament pairs you again")
            }
        }
    }
}

impl std::error::Error for GameError {}

/// Why a [`crate::SavedGame`] cannot be turned back into a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RestoreError {
    /// A saved move is not UCI or not legal where it was played.
    BadMove { ply: u32, uci: String },
    /// Saved state contradicts the moves (for example a clock that runs in
    /// correspondence, or a premove for the side to move).
    Inconsistent(&'static str),
}

impl fmt::Display for RestoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RestoreError::BadMove { ply, uci } => {
                write!(f, "saved move {uci:?} at ply {ply} is not legal")
            }
            RestoreError::Inconsistent(what) => write!(f, "inconsistent saved game: {what}"),
        }
    }
}

impl std::error::Error for RestoreError {}
