-- accounts of the host platform (sign-in through its OpenID Connect provider,
-- docs/operations.md): such an account is the provider's `sub`, unique per
-- provider; local password accounts leave it null. reward requests name the
-- account by it, so the platform pays its own user.
alter table accounts add column platform_subject text;
create unique index accounts_platform_subject on accounts (platform_subject)
    where platform_subject is not null;
