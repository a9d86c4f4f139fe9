//! A bank ledger, written as a wasmod module from the guide pages in `docs/`.
//!
//! Clients open accounts (checking or savings), deposit, and transfer between accounts; a
//! transfer that would overdraw, or name an account that does not exist, fails and changes
//! nothing. Every transfer is recorded in a ledger. Savings accounts are paid interest every 30
//! days by a scheduled reducer. A client sees only its own accounts. An HTTP handler answers an account's public summary as JSON at
//! `GET /v1/http/accounts/{name}`.

use std::time::Duration;
use wasmod::prelude::*;

/// How often interest is paid.
pub const INTEREST_PERIOD: Duration = Duration::from_secs(30 * 24 * 3600);

/// The bank: its tables and entry points.
#[wasmod::module]
pub mod ledger {
    use super::*;

    /// What an account is for.
    #[derive(SchemaType, Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Kind {
        /// Day-to-day money: no interest.
        Checking,
        /// Savings: paid interest.
        Savings,
    }

    /// An account: who owns it and what is in it, in cents. Each client reads only its own
    /// accounts, in subscriptions, queries and table reads alike.
    #[table(public, visibility = "owner = :sender")]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Account {
        #[primary_key]
        /// The account's name, unique in the bank.
        pub name: String,
        #[index(btree)]
        /// Who opened it, and may move money out of it.
        pub owner: Identity,
        #[index(btree)]
        /// What it is for.
        pub kind: Kind,
        /// The money in it, in cents.
        pub balance: u64,
        /// When it was opened.
        pub opened: Timestamp,
    }

    /// One movement of money, kept for ever.
    #[table(public)]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Transfer {
        #[primary_key]
        #[auto_inc]
        /// Assigned by the table's sequence.
        pub id: u64,
        #[index(btree)]
        /// The account the money left.
        pub from: String,
        #[index(btree)]
        /// The account the money went to.
        pub to: String,
        /// How much, in cents.
        pub amount: u64,
        /// When.
        pub at: Timestamp,
    }

    /// When interest is paid, and how much: `init` writes one row, due every
    /// [`INTEREST_PERIOD`]. The host calls `pay_interest` with it; clients cannot.
    #[table(scheduled(pay_interest))]
    #[derive(Clone, Debug, PartialEq)]
    pub struct InterestPayment {
        #[primary_key]
        #[auto_inc]
        /// Assigned by the table's sequence.
        pub id: u64,
        /// When the payment is due.
        pub at: ScheduleAt,
        /// The interest of a period, in hundredths of a percent.
        pub basis_points: u64,
    }

    /// What `GET /accounts/{name}` answers: an account without its balance.
    #[derive(SchemaType, Clone, Debug, PartialEq)]
    pub struct Summary {
        /// The account's name.
        pub name: String,
        /// Who owns it.
        pub owner: Identity,
        /// What it is for.
        pub kind: Kind,
        /// When it was opened.
        pub opened: Timestamp,
    }

    /// Schedules the interest: half a percent every period.
    #[reducer(init)]
    fn init(ctx: &ReducerContext) {
        ctx.db.interest_payment().insert(InterestPayment {
            id: 0,
            at: INTEREST_PERIOD.into(),
            basis_points: 50,
        });
    }

    /// Pays every savings account its interest, rounded down to the cent. Called by the host
    /// when `payment` is due.
    #[reducer]
    fn pay_interest(ctx: &ReducerContext, payment: InterestPayment) -> Result<(), String> {
        let accounts = ctx.db.account();
        let savings: Vec<Account> = accounts.kind().filter(Kind::Savings).collect();
        for account in savings {
            let interest = account
                .balance
                .checked_mul(payment.basis_points)
                .ok_or("the interest overflows")?
                / 10_000;
            let balance = account
                .balance
                .checked_add(interest)
                .ok_or("too much money")?;
            accounts.name().update(Account { balance, ..account });
        }
        Ok(())
    }

    /// Opens an empty account `name` owned by the caller.
    #[reducer]
    fn open_account(ctx: &ReducerContext, name: String, kind: Kind) -> Result<(), String> {
        if name.is_empty() || name.len() > 64 {
            return Err("an account's name has 1 to 64 bytes".into());
        }
        let account = Account {
            name,
            owner: ctx.sender(),
            kind,
            balance: 0,
            opened: ctx.timestamp(),
        };
        ctx.db
            .account()
            .try_insert(account)
            .map(drop)
            .map_err(|_| "an account of that name exists".into())
    }

    /// Puts `amount` cents into account `name` (anyone may).
    #[reducer]
    fn deposit(ctx: &ReducerContext, name: String, amount: u64) -> Result<(), String> {
        let accounts = ctx.db.account();
        let account = accounts.name().find(&name).ok_or("no such account")?;
        let balance = account
            .balance
            .checked_add(amount)
            .ok_or("too much money")?;
        accounts.name().update(Account { balance, ..account });
        Ok(())
    }

    /// Moves `amount` cents from the caller's account `from` to account `to`. Fails, changing
    /// nothing, if `from` is not the caller's, either account does not exist, or `from` holds
    /// less than `amount`.
    #[reducer]
    fn transfer(ctx: &ReducerContext, from: String, to: String, amount: u64) -> Result<(), String> {
        if from == to {
            return Err("a transfer needs two accounts".into());
        }
        let accounts = ctx.db.account();
        let mut source = accounts
            .name()
            .find(&from)
            .ok_or("no such account to take from")?;
        if source.owner != ctx.sender() {
            return Err("only its owner takes money out of an account".into());
        }
        source.balance = source
            .balance
            .checked_sub(amount)
            .ok_or("insufficient funds")?;
        accounts.name().update(source);
        // The debit is written: a failure from here on rolls it back with the reducer.
        let target = accounts
            .name()
            .find(&to)
            .ok_or("no such account to pay into")?;
        let balance = target.balance.checked_add(amount).ok_or("too much money")?;
        accounts.name().update(Account { balance, ..target });
        ctx.db.transfer().insert(Transfer {
            id: 0,
            from,
            to,
            amount,
            at: ctx.timestamp(),
        });
        Ok(())
    }

    /// The caller's accounts.
    #[view]
    fn my_accounts(ctx: &ViewContext) -> Vec<Account> {
        ctx.db.account().owner().filter(ctx.sender()).collect()
    }

    /// An account's public summary, as JSON; `404` if there is no such account.
    #[http_handler(GET, "/accounts/{name}")]
    fn summary(ctx: &mut HttpContext, _request: Request) -> Response {
        let name = ctx.param("name").unwrap_or_default().to_owned();
        match ctx.with_read_tx(|tx| tx.db.account().name().find(&name)) {
            Some(account) => Response::json(&Summary {
                name: account.name,
                owner: account.owner,
                kind: account.kind,
                opened: account.opened,
            }),
            None => Response::new(404).with_body(format!("no account {name}")),
        }
    }
}
