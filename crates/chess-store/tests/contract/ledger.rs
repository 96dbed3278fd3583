//! The reward ledger against real databases: each test runs on SQLite and
//! on Postgres, through the store the server uses.

use std::path::Path;

use chess_game::{EndReason, GameResult};
use chess_live::{PlayerKind, PlayerRow};
use chess_rules::{ByColor, Color};
use chess_store::Store;
use chess_store::ledger::{
    DAILY_CAP_CENTS, EntryStatus, LedgerEntry, REWARD_CENTS, Recorded, UtcDay,
};
use uuid::Uuid;

use chess_store::on_both_stores;
use chess_store::testing::TestDatabase;

/// The result every recorded win here has.
const WHITE_MATES: GameResult = GameResult {
    winner: Some(Color::White),
    reason: EndReason::Checkmate,
};

/// Noon UTC on 2026-11-29: tests place wins relative to this instant.
fn noon() -> i64 {
    UtcDay::parse("2026-11-29")
        .expect("a valid date")
        .start_unix_ms()
        + 12 * 60 * 60 * 1000
}

/// The audit queries of `docs/rewards.md` that must return no rows and need
/// only the ledger's tables: the SQL blocks after a paragraph saying "must
/// return no rows" and not "needs".
fn documented_audits() -> Vec<String> {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rewards.md"),
    )
    .expect("read docs/rewards.md");
    let mut audits = Vec::new();
    // The last paragraph of prose before the current line.
    let mut paragraph = String::new();
    let mut after_blank = false;
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let line = line.trim();
        if line == "```sql" {
            let sql: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
            if paragraph.contains("must return no rows") && !paragraph.contains("needs") {
                audits.push(sql.join("\n"));
            }
            paragraph.clear();
        } else if line.is_empty() {
            after_blank = true;
        } else {
            if after_blank {
                paragraph.clear();
                after_blank = false;
            }
            paragraph.push_str(line);
            paragraph.push(' ');
        }
    }
    audits
}

fn credited(entry: &LedgerEntry) -> bool {
    entry.status == EntryStatus::Credited && entry.amount_cents == REWARD_CENTS
}

fn over_cap(entry: &LedgerEntry) -> bool {
    entry.status == EntryStatus::OverCap && entry.amount_cents == 0
}

/// Records one win in its own committed transaction.
async fn win(store: &Store, game: Uuid, account: Uuid, at_ms: i64) -> Recorded {
    let mut tx = store.begin().await.expect("begin");
    let recorded = tx
        .record_win(game, account, &WHITE_MATES, at_ms)
        .await
        .expect("record a win");
    tx.commit().await.expect("commit");
    recorded
}

async fn total(store: &Store, account: Uuid, at_ms: i64) -> i64 {
    store
        .reward_total(account, UtcDay::from_unix_ms(at_ms))
        .await
        .expect("read the total")
        .total_cents
}

async fn entries(store: &Store, account: Uuid) -> Vec<LedgerEntry> {
    store
        .reward_entries(account, 1000)
        .await
        .expect("read the entries")
}

async fn player(store: &Store, kind: PlayerKind) -> Uuid {
    let id = Uuid::new_v4();
    store
        .insert_player(&PlayerRow {
            id,
            kind,
            name: format!("{kind}-{}", id.simple()),
            created_at: chess_live::UnixMs::from_millis(0),
            bot: false,
        })
        .await
        .expect("insert a player");
    id
}

on_both_stores!(
    settling_pays_only_decisive_wins_between_two_different_accounts,
    async |store: Store, _db: &TestDatabase| {
        let a = player(&store, PlayerKind::Account).await;
        let b = player(&store, PlayerKind::Account).await;
        let guest = player(&store, PlayerKind::Guest).await;
        let computer = player(&store, PlayerKind::Computer).await;
        let white_wins = |reason| GameResult {
            winner: Some(Color::White),
            reason,
        };
        let black_wins = |reason| GameResult {
            winner: Some(Color::Black),
            reason,
        };
        let drawn = |reason| GameResult {
            winner: None,
            reason,
        };
        let cases = [
            (Some(a), Some(b), white_wins(EndReason::Checkmate), Some(a)),
            (
                Some(a),
                Some(b),
                black_wins(EndReason::Resignation),
                Some(b),
            ),
            (Some(b), Some(a), white_wins(EndReason::Timeout), Some(b)),
            (Some(a), Some(b), drawn(EndReason::Agreement), None),
            (Some(a), Some(b), drawn(EndReason::Stalemate), None),
            (
                Some(a),
                Some(b),
                drawn(EndReason::TimeoutVsInsufficientMaterial),
                None,
            ),
            (Some(a), Some(b), drawn(EndReason::Aborted), None),
            (Some(a), Some(guest), white_wins(EndReason::Checkmate), None),
            (Some(guest), Some(b), black_wins(EndReason::Checkmate), None),
            (
                Some(a),
                Some(computer),
                white_wins(EndReason::Checkmate),
                None,
            ),
            (Some(a), Some(a), white_wins(EndReason::Checkmate), None),
            (Some(a), None, white_wins(EndReason::Checkmate), None),
            (
                Some(a),
                Some(Uuid::new_v4()),
                white_wins(EndReason::Checkmate),
                None,
            ),
        ];
        for (white, black, result, payee) in cases {
            let game = Uuid::new_v4();
            let mut tx = store.begin().await.expect("begin");
            let settled = tx
                .settle_reward(game, ByColor { white, black }, &result, noon(), false)
                .await
                .expect("settle");
            tx.commit().await.expect("commit");
            let paid = settled.as_ref().map(|r| r.entry().account_id);
            assert_eq!(paid, payee, "{result:?} between {white:?} and {black:?}");
            if let Some(recorded) = settled {
                assert!(
                    matches!(recorded, Recorded::New(ref e) if credited(e) && e.game_id == game)
                );
            }
        }
        assert_eq!(total(&store, a, noon()).await, 100);
        assert_eq!(total(&store, b, noon()).await, 200);
        assert!(entries(&store, guest).await.is_empty());
    }
);

on_both_stores!(
    a_win_pays_one_dollar,
    async |store: Store, _db: &TestDatabase| {
        let (game, account) = (Uuid::new_v4(), Uuid::new_v4());

        let recorded = win(&store, game, account, noon()).await;

        let Recorded::New(entry) = recorded else {
            panic!("a first win must write an entry: {recorded:?}");
        };
        assert!(credited(&entry), "{entry:?}");
        assert_eq!((entry.game_id, entry.account_id), (game, account));
        assert_eq!(entry.day.to_string(), "2026-11-29");
        assert_eq!(entry.created_at_ms, noon());
        assert_eq!(total(&store, account, noon()).await, 100);
        assert_eq!(entries(&store, account).await, vec![entry]);
        // Another account's standing is untouched.
        assert_eq!(total(&store, Uuid::new_v4(), noon()).await, 0);
    }
);

on_both_stores!(
    the_sixth_win_of_a_day_is_recorded_at_zero_over_the_cap,
    async |store: Store, _db: &TestDatabase| {
        let account = Uuid::new_v4();

        let mut results = Vec::new();
        for minute in 0..6 {
            let at = noon() + minute * 60_000;
            results.push(win(&store, Uuid::new_v4(), account, at).await);
        }

        let entries_written: Vec<&LedgerEntry> = results.iter().map(Recorded::entry).collect();
        assert!(
            entries_written[..5].iter().all(|e| credited(e)),
            "{entries_written:?}"
        );
        assert!(over_cap(entries_written[5]), "{:?}", entries_written[5]);
        assert_eq!(total(&store, account, noon()).await, DAILY_CAP_CENTS);
        let stored = entries(&store, account).await;
        assert_eq!(stored.len(), 6);
        // Newest first: the over-cap entry leads, so the player sees why.
        assert!(over_cap(&stored[0]));
    }
);

on_both_stores!(
    the_day_rolls_over_at_utc_midnight,
    async |store: Store, _db: &TestDatabase| {
        let account = Uuid::new_v4();
        let midnight = UtcDay::from_unix_ms(noon()).next().start_unix_ms();

        for second in 1..=6 {
            win(&store, Uuid::new_v4(), account, midnight - second * 1000).await;
        }
        let last_ms_of_day = win(&store, Uuid::new_v4(), account, midnight - 1).await;
        let first_ms_of_next = win(&store, Uuid::new_v4(), account, midnight).await;

        assert!(over_cap(last_ms_of_day.entry()), "{last_ms_of_day:?}");
        assert_eq!(last_ms_of_day.entry().day.to_string(), "2026-11-29");
        assert!(credited(first_ms_of_next.entry()), "{first_ms_of_next:?}");
        assert_eq!(first_ms_of_next.entry().day.to_string(), "2026-11-30");
        assert_eq!(total(&store, account, midnight - 1).await, 500);
        assert_eq!(total(&store, account, midnight).await, 100);
    }
);

on_both_stores!(
    a_game_whose_end_is_applied_twice_credits_once,
    async |store: Store, _db: &TestDatabase| {
        let (game, account) = (Uuid::new_v4(), Uuid::new_v4());

        let first = win(&store, game, account, noon()).await;
        // A retry after a restart, a minute later: nothing new.
        let second = win(&store, game, account, noon() + 60_000).await;

        let Recorded::New(entry) = first else {
            panic!("{first:?}")
        };
        assert_eq!(second, Recorded::AlreadyRecorded(entry));
        assert_eq!(total(&store, account, noon()).await, 100);
        assert_eq!(entries(&store, account).await.len(), 1);
    }
);

on_both_stores!(
    a_second_application_in_the_callers_transaction_leaves_it_usable,
    async |store: Store, _db: &TestDatabase| {
        let (game, account) = (Uuid::new_v4(), Uuid::new_v4());
        let mut tx = store.begin().await.expect("begin");

        let first = tx
            .record_win(game, account, &WHITE_MATES, noon())
            .await
            .expect("first");
        let second = tx
            .record_win(game, account, &WHITE_MATES, noon())
            .await
            .expect("second");
        // The caller's own work after the duplicate still commits.
        let other = tx
            .record_win(Uuid::new_v4(), account, &WHITE_MATES, noon())
            .await
            .expect("other");
        tx.commit().await.expect("commit");

        assert!(matches!(first, Recorded::New(_)));
        assert!(matches!(second, Recorded::AlreadyRecorded(_)));
        assert!(matches!(other, Recorded::New(_)));
        assert_eq!(total(&store, account, noon()).await, 200);
    }
);

on_both_stores!(
    a_rolled_back_result_pays_nothing,
    async |store: Store, _db: &TestDatabase| {
        let (game, account) = (Uuid::new_v4(), Uuid::new_v4());

        let mut tx = store.begin().await.expect("begin");
        tx.record_win(game, account, &WHITE_MATES, noon())
            .await
            .expect("record");
        // The game's result failed to store: the caller rolls back.
        tx.rollback().await.expect("rollback");

        assert_eq!(total(&store, account, noon()).await, 0);
        assert!(entries(&store, account).await.is_empty());
        // The ending applied again later pays normally, once.
        assert!(matches!(
            win(&store, game, account, noon()).await,
            Recorded::New(_)
        ));
    }
);

on_both_stores!(
    fifty_concurrent_wins_of_one_account_credit_exactly_five_dollars,
    async |store: Store, db: &TestDatabase| {
        let account = Uuid::new_v4();

        let tasks: Vec<_> = (0..50)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move { win(&store, Uuid::new_v4(), account, noon()).await })
            })
            .collect();
        let mut recorded = Vec::new();
        for task in tasks {
            recorded.push(task.await.expect("a win task"));
        }

        assert!(recorded.iter().all(|r| matches!(r, Recorded::New(_))));
        let paid = recorded.iter().filter(|r| credited(r.entry())).count();
        let unpaid = recorded.iter().filter(|r| over_cap(r.entry())).count();
        assert_eq!((paid, unpaid), (5, 45));
        assert_eq!(total(&store, account, noon()).await, 500);
        let stored = entries(&store, account).await;
        assert_eq!(stored.iter().map(|e| e.amount_cents).sum::<i64>(), 500);
        assert_eq!(stored.len(), 50);

        // The finance page's audit queries agree.
        let audits = documented_audits();
        assert_eq!(audits.len(), 5, "{audits:#?}");
        for audit in audits {
            let rows = db
                .raw(&audit)
                .await
                .unwrap_or_else(|e| panic!("{audit}: {e}"));
            assert!(rows == 0, "{audit}");
        }
    }
);

on_both_stores!(
    one_game_ending_concurrently_ten_times_credits_once,
    async |store: Store, _db: &TestDatabase| {
        let (game, account) = (Uuid::new_v4(), Uuid::new_v4());

        let tasks: Vec<_> = (0..10)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move { win(&store, game, account, noon() + i).await })
            })
            .collect();
        let mut new = 0;
        for task in tasks {
            if matches!(task.await.expect("a win task"), Recorded::New(_)) {
                new += 1;
            }
        }

        assert_eq!(new, 1);
        assert_eq!(total(&store, account, noon()).await, 100);
        assert_eq!(entries(&store, account).await.len(), 1);
    }
);

on_both_stores!(
    the_database_refuses_to_change_or_remove_entries_and_totals,
    async |store: Store, db: &TestDatabase| {
        let account = Uuid::new_v4();
        win(&store, Uuid::new_v4(), account, noon()).await;
        let tampering = [
            "update reward_entries set amount_cents = 0, status = 'over_cap'",
            "update reward_entries set created_at = 0",
            "delete from reward_entries",
            "update reward_days set total_cents = 0",
            "delete from reward_days",
            // Past the cap, even by hand.
            "update reward_days set total_cents = 600",
        ];
        for statement in tampering {
            let result = db.raw(statement).await;
            assert!(result.is_err(), "{statement} was allowed");
        }
        // An entry whose amount does not match its status is refused.
        let inconsistent = db
        .raw(
            "insert into reward_entries (game_id, account_id, amount_cents, day, status, created_at)
             values ('g', 'a', 50, '2026-11-29', 'credited', 0)",
        )
        .await;
        assert!(inconsistent.is_err(), "a 50-cent credit was stored");

        let stored = entries(&store, account).await;
        assert_eq!(stored.len(), 1);
        assert!(credited(&stored[0]));
        assert_eq!(total(&store, account, noon()).await, 100);
    }
);

on_both_stores!(
    with_platform_accounts_only_a_local_account_earns_nothing,
    async |store: Store, db: &TestDatabase| {
        // Two accounts of the host platform and two local ones (all four
        // are `account` players; only the first two have a platform subject).
        let mut ids = Vec::new();
        for (name, subject) in [
            ("pa", Some("sub-a")),
            ("pb", Some("sub-b")),
            ("la", None),
            ("lb", None),
        ] {
            let id = player(&store, PlayerKind::Account).await;
            let subject = subject.map_or("null".to_owned(), |s| format!("'{s}'"));
            db.raw(&format!(
                "insert into accounts (player_id, username, username_key, password_hash, \
                 created_at, password_changed_at, platform_subject) \
                 values ('{id}', '{name}', '{name}', '!', 0, 0, {subject})"
            ))
            .await
            .expect("an account row");
            ids.push(id);
        }
        let (pa, pb, la, lb) = (ids[0], ids[1], ids[2], ids[3]);
        let mate = GameResult {
            winner: Some(Color::White),
            reason: EndReason::Checkmate,
        };
        let settle = |white, black, platform_only| {
            let store = store.clone();
            async move {
                let mut tx = store.begin().await.expect("begin");
                let settled = tx
                    .settle_reward(
                        Uuid::new_v4(),
                        ByColor {
                            white: Some(white),
                            black: Some(black),
                        },
                        &mate,
                        noon(),
                        platform_only,
                    )
                    .await
                    .expect("settle");
                tx.commit().await.expect("commit");
                settled.map(|recorded| recorded.entry().account_id)
            }
        };
        assert_eq!(
            settle(pa, pb, true).await,
            Some(pa),
            "platform v platform pays"
        );
        assert_eq!(
            settle(la, lb, true).await,
            None,
            "local v local pays nothing"
        );
        assert_eq!(
            settle(pa, la, true).await,
            None,
            "a local opponent counts as a guest"
        );
        assert_eq!(
            settle(la, pa, true).await,
            None,
            "a local winner is not paid"
        );
        assert_eq!(
            settle(la, lb, false).await,
            Some(la),
            "with local accounts on, they pay"
        );
    }
);
