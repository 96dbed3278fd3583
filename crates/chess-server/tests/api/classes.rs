//! A club's class, on both databases: its leader creates the accounts (the
//! refusals first), each pupil signs in only by choosing a password, the
//! leader hands out a new one to a pupil who forgot theirs; and a classroom
//! of 30 behind one address signs in and joins an arena with no refusal,
//! while a password guesser and a guest flood from that address are held
//! exactly as before.

use std::collections::HashSet;

use chess_server::auth::rate_limit::{
    SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS, SIGN_IN_FAILURES_PER_ADDRESS,
};
use serde_json::{Value, json};

use crate::helpers::{Guest, TestApp, header};
use crate::on_both_backends;

/// A class account and the password it was handed.
#[derive(Clone, Debug)]
struct Pupil {
    username: String,
    password: String,
}

impl TestApp {
    /// `teacher` creates a club by invitation: its id.
    async fn class_club(&self, teacher: &Guest, name: &str) -> String {
        let body = json!({ "name": name, "admission": "invitation" });
        let (status, club) = self.post("/api/clubs", teacher, body).await;
        assert_eq!(status, 201, "{club}");
        club["id"].as_str().expect("id").to_owned()
    }

    /// `teacher` creates a class of `count` in `club`: the accounts.
    async fn class(&self, teacher: &Guest, club: &str, count: usize) -> Vec<Pupil> {
        let (status, class) = self
            .post(
                &format!("/api/clubs/{club}/class"),
                teacher,
                json!({ "count": count }),
            )
            .await;
        assert_eq!(status, 201, "{class}");
        class["accounts"]
            .as_array()
            .expect("accounts")
            .iter()
            .map(|account| Pupil {
                username: account["username"].as_str().expect("username").to_owned(),
                password: account["password"].as_str().expect("password").to_owned(),
            })
            .collect()
    }

    /// A POST without a cookie: the status, the session cookie it set (if
    /// any) and the body.
    async fn post_anonymous(&self, path: &str, body: Value) -> (u16, Option<String>, Value) {
        let response = self.request("POST", path, &[], Some(body)).await;
        let status = response.status().as_u16();
        let cookie = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .find(|value| value.starts_with("chess_session="))
            .map(|value| value.split(';').next().expect("name=value").to_owned());
        let body = response.json().await.unwrap_or(Value::Null);
        (status, cookie, body)
    }

    async fn sign_in_as(&self, username: &str, password: &str) -> (u16, Option<String>, Value) {
        self.post_anonymous(
            "/api/account/sign-in",
            json!({ "username": username, "password": password }),
        )
        .await
    }

    /// The pupil's first sign-in: their own password replaces the handed-out one.
    async fn first_password(&self, pupil: &Pupil, new: &str) -> (u16, Option<String>, Value) {
        self.post_anonymous(
            "/api/account/first-password",
            json!({ "username": pupil.username, "password": pupil.password, "new_password": new }),
        )
        .await
    }
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("")
}

on_both_backends!(
    a_leaders_class_signs_in_by_choosing_its_own_passwords,
    |app: TestApp| async move {
        let teacher = app.sign_up(&app.guest().await, "Teacher").await;
        let stranger = app.sign_up(&app.guest().await, "Stranger").await;
        let club = app.class_club(&teacher, "Class 7B").await;
        let path = format!("/api/clubs/{club}/class");

        // The refusals, before anything is made.
        let (status, body) = app
            .post(&path, &app.guest().await, json!({ "count": 2 }))
            .await;
        assert_eq!((status, code(&body)), (401, "not_signed_in"));
        let (status, body) = app.post(&path, &stranger, json!({ "count": 2 })).await;
        assert_eq!((status, code(&body)), (403, "not_a_leader"));
        let (status, body) = app
            .post("/api/clubs/nope/class", &teacher, json!({ "count": 2 }))
            .await;
        assert_eq!((status, code(&body)), (404, "club_not_found"));
        for bad in [
            json!({ "count": 0 }),
            json!({ "count": 101 }),
            json!({ "count": 2, "prefix": "-x" }),
            json!({ "count": 2, "prefix": "far-too-long-prefix" }),
            json!({ "count": 2, "colour": "red" }),
            json!({ "count": "two" }),
        ] {
            let (status, body) = app.post(&path, &teacher, bad.clone()).await;
            assert_eq!(status, 422, "{bad}: {body}");
        }
        assert_eq!(
            app.get(&format!("/api/clubs/{club}"), Some(&teacher.cookie))
                .await
                .1["members"]
                .as_array()
                .expect("members")
                .len(),
            1
        );

        // Made: members of the club, with their passwords shown once.
        let response = app
            .request(
                "POST",
                &path,
                &[("cookie", teacher.cookie.as_str())],
                Some(json!({ "count": 3, "prefix": "Lions" })),
            )
            .await;
        assert_eq!(response.status(), 201);
        assert_eq!(header(&response, "cache-control"), "no-store");
        let made: Value = response.json().await.expect("json");
        assert_eq!(made["sign_in_url"], "/account.html");
        let pupils: Vec<Pupil> = made["accounts"]
            .as_array()
            .expect("accounts")
            .iter()
            .map(|a| Pupil {
                username: a["username"].as_str().expect("name").to_owned(),
                password: a["password"].as_str().expect("password").to_owned(),
            })
            .collect();
        assert_eq!(pupils.len(), 3);
        assert!(
            pupils.iter().all(|p| p.username.starts_with("lions-")),
            "{made}"
        );
        let (_, view) = app
            .get(&format!("/api/clubs/{club}"), Some(&teacher.cookie))
            .await;
        assert_eq!(view["members"].as_array().expect("members").len(), 4);
        let roster = view["class"].as_array().expect("the leader sees the class");
        assert_eq!(roster.len(), 3);
        assert!(roster.iter().all(|a| a["signed_in"] == false), "{view}");
        let (_, seen) = app
            .get(&format!("/api/clubs/{club}"), Some(&stranger.cookie))
            .await;
        assert!(
            seen.get("class").is_none(),
            "only leaders see the class: {seen}"
        );

        // The handed-out password does not sign in; a wrong one reads as any
        // wrong password.
        let pupil = &pupils[0];
        let (status, cookie, body) = app.sign_in_as(&pupil.username, &pupil.password).await;
        assert_eq!((status, code(&body)), (403, "password_change_required"));
        assert!(cookie.is_none());
        let (status, _, body) = app.sign_in_as(&pupil.username, "wrong-wrong").await;
        assert_eq!((status, code(&body)), (401, "invalid_credentials"));

        // The first sign-in chooses the pupil's own password.
        let (status, _, body) = app.first_password(pupil, &pupil.password).await;
        assert_eq!((status, code(&body)), (422, "invalid_password"));
        let (status, _, body) = app.first_password(pupil, "short").await;
        assert_eq!((status, code(&body)), (422, "invalid_password"));
        let forged = Pupil {
            password: "not-the-one".to_owned(),
            ..pupil.clone()
        };
        let (status, _, body) = app.first_password(&forged, "my own secret").await;
        assert_eq!((status, code(&body)), (401, "invalid_credentials"));
        let (status, cookie, body) = app.first_password(pupil, "my own secret").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["username"], pupil.username.as_str());
        let session = cookie.expect("signed in");
        let (status, account) = app.get("/api/account", Some(&session)).await;
        assert_eq!(
            (status, &account["username"]),
            (200, &json!(pupil.username))
        );
        let (status, _, _) = app.sign_in_as(&pupil.username, &pupil.password).await;
        assert_eq!(status, 401, "the handed-out password is gone");
        let (status, _, _) = app.sign_in_as(&pupil.username, "my own secret").await;
        assert_eq!(status, 200);
        let (status, _, body) = app.first_password(pupil, "another secret").await;
        assert_eq!((status, code(&body)), (401, "invalid_credentials"));
        let chosen = Pupil {
            password: "my own secret".to_owned(),
            ..pupil.clone()
        };
        let (status, _, body) = app.first_password(&chosen, "another secret").await;
        assert_eq!((status, code(&body)), (409, "password_already_chosen"));
        let (_, view) = app
            .get(&format!("/api/clubs/{club}"), Some(&teacher.cookie))
            .await;
        let signed_in: Vec<&str> = view["class"]
            .as_array()
            .expect("class")
            .iter()
            .filter(|a| a["signed_in"] == true)
            .map(|a| a["username"].as_str().expect("name"))
            .collect();
        assert_eq!(signed_in, [pupil.username.as_str()]);

        // A pupil who forgot: the leader hands out a new password, the
        // pupil's sessions end and the next sign-in chooses again.
        let reset = format!(
            "/api/clubs/{club}/class/{}/reset",
            pupil.username.to_uppercase()
        );
        let (status, body) = app.post(&reset, &stranger, json!({})).await;
        assert_eq!((status, code(&body)), (403, "not_a_leader"));
        let (status, again) = app.post(&reset, &teacher, json!({})).await;
        assert_eq!(status, 200, "{again}");
        assert_eq!(
            again["username"],
            pupil.username.as_str(),
            "as the account spells it"
        );
        let renewed = Pupil {
            username: pupil.username.clone(),
            password: again["password"].as_str().expect("password").to_owned(),
        };
        assert_ne!(renewed.password, pupil.password);
        let (status, _) = app.get("/api/account", Some(&session)).await;
        assert_eq!(status, 401, "the pupil's session ended");
        let (status, _, body) = app.sign_in_as(&renewed.username, &renewed.password).await;
        assert_eq!((status, code(&body)), (403, "password_change_required"));
        let (status, _, _) = app.first_password(&renewed, "a newer secret").await;
        assert_eq!(status, 200);
        // Not the leaders' to reset: an account of no class, a stranger.
        let (status, body) = app
            .post(
                &format!("/api/clubs/{club}/class/Teacher/reset"),
                &teacher,
                json!({}),
            )
            .await;
        assert_eq!((status, code(&body)), (404, "not_in_class"));
        let (status, body) = app
            .post(
                &format!("/api/clubs/{club}/class/nobody/reset"),
                &teacher,
                json!({}),
            )
            .await;
        assert_eq!(status, 404, "{body}");
    }
);

on_both_backends!(
    a_classroom_behind_one_address_joins_an_arena_while_guessers_stay_held,
    |app: TestApp| async move {
        // Every request of this test comes from 127.0.0.1: one school address.
        let teacher = app.sign_up(&app.guest().await, "Teacher").await;
        let club = app.class_club(&teacher, "Lions").await;
        let pupils = app.class(&teacher, &club, 30).await;
        let names: HashSet<&str> = pupils.iter().map(|p| p.username.as_str()).collect();
        assert_eq!(names.len(), 30);
        let arena = json!({
            "name": "Lesson",
            "clockTime": "3",
            "clockIncrement": "0",
            "minutes": "30",
            "waitMinutes": "5",
            "conditions.teamMember.teamId": club,
        });
        let (status, arena) = app.post("/api/arenas", &teacher, arena).await;
        assert_eq!(status, 201, "{arena}");
        let arena = arena["id"].as_str().expect("id").to_owned();

        // Thirty browsers at once: each opens the site (a guest), signs in
        // with its sheet's password, chooses its own and joins.
        let statuses =
            futures_util::future::join_all(pupils.iter().enumerate().map(|(i, pupil)| {
                let app = &app;
                let arena = &arena;
                async move {
                    let browser = app.guest().await;
                    let (first, _, _) = app.sign_in_as(&pupil.username, &pupil.password).await;
                    let (chosen, cookie, body) = app
                        .first_password(pupil, &format!("pupil secret {i}"))
                        .await;
                    let cookie = cookie.unwrap_or_else(|| panic!("signed in: {body}"));
                    let pupil_browser = Guest { cookie, ..browser };
                    let (joined, body) = app
                        .post(
                            &format!("/api/arenas/{arena}/join"),
                            &pupil_browser,
                            json!({}),
                        )
                        .await;
                    assert_eq!(joined, 204, "{body}");
                    [first, chosen, joined]
                }
            }))
            .await;
        for (pupil, statuses) in pupils.iter().zip(&statuses) {
            assert_eq!(statuses, &[403, 200, 204], "{}", pupil.username);
        }
        let (_, standing) = app
            .get(&format!("/api/arenas/{arena}"), Some(&teacher.cookie))
            .await;
        assert_eq!(standing["players"], 30, "{standing}");

        // A guesser from the same address gets the tries of any address:
        // this many on one account...
        let target = &pupils[0].username;
        for guess in 0..SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS.max {
            let (status, _, _) = app
                .sign_in_as(target, &format!("guess number {guess}"))
                .await;
            assert_eq!(status, 401, "guess {guess}");
        }
        let (status, _, body) = app.sign_in_as(target, "one guess more").await;
        assert_eq!((status, code(&body)), (429, "too_many_requests"));
        // ...and this many over all accounts together.
        let spread =
            SIGN_IN_FAILURES_PER_ADDRESS.max - SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS.max;
        for (guess, pupil) in pupils[1..=spread].iter().enumerate() {
            let (status, _, _) = app
                .sign_in_as(&pupil.username, &format!("guess number {guess}"))
                .await;
            assert_eq!(status, 401, "guess {guess} at {}", pupil.username);
        }
        let (status, _, body) = app.sign_in_as(&pupils[29].username, "sprayed guess").await;
        assert_eq!((status, code(&body)), (429, "too_many_requests"));

        // New guests from the address are still held at the hourly limit,
        // counting the classroom's.
        let limit = app.settings.new_guests_per_address_per_hour;
        let mut minted = 1 + 30; // the teacher's and the classroom's
        while minted < limit {
            let response = app.request("GET", "/api/me", &[], None).await;
            assert_eq!(response.status(), 200, "guest {minted}");
            minted += 1;
        }
        let response = app.request("GET", "/api/me", &[], None).await;
        assert_eq!(response.status(), 429);
    }
);
