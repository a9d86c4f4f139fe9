//! A module exercising the runtime, run natively against the real host: table handles,
//! indexes and scans, argument decoding, results and errors, rollbacks, logs, procedures,
//! views and HTTP handlers.

use wasmod::http::{Method, Request};
use wasmod::{Errno, Identity};
use wasmod_testing::{CallFailure, LogLevel, Outcome, TestModule};

#[wasmod::module]
mod shop {
    use wasmod::prelude::*;

    /// An item for sale.
    #[table(public, index(name = by_shelf, columns(aisle, shelf)))]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Item {
        #[primary_key]
        #[auto_inc]
        pub id: u64,
        #[unique]
        pub sku: String,
        #[index(btree)]
        pub price: u32,
        pub aisle: u8,
        pub shelf: u8,
        pub owner: Identity,
    }

    /// A plain row: fixed-size numbers, no padding.
    #[table]
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    pub struct Point {
        #[primary_key]
        pub id: u64,
        pub x: u64,
        pub y: u32,
        pub z: u32,
    }

    #[derive(SchemaType, Clone, Debug, PartialEq)]
    pub enum Discount {
        None,
        Percent(u8),
        Fixed { amount: u32 },
    }

    #[reducer]
    fn add(
        ctx: &ReducerContext,
        sku: String,
        price: u32,
        aisle: u8,
        shelf: u8,
    ) -> Result<(), String> {
        let item = Item {
            id: 0,
            sku,
            price,
            aisle,
            shelf,
            owner: ctx.sender(),
        };
        ctx.db
            .item()
            .try_insert(item)
            .map(|_| ())
            .map_err(|error| error.to_string())
    }

    #[reducer]
    fn add_then_fail(ctx: &ReducerContext, sku: String) -> Result<(), String> {
        ctx.db.item().insert(Item {
            id: 0,
            sku,
            price: 1,
            aisle: 0,
            shelf: 0,
            owner: ctx.sender(),
        });
        Err("changed my mind".into())
    }

    #[reducer]
    fn add_then_panic(ctx: &ReducerContext, sku: String) {
        ctx.db.item().insert(Item {
            id: 0,
            sku,
            price: 1,
            aisle: 0,
            shelf: 0,
            owner: ctx.sender(),
        });
        panic!("the shelf collapsed");
    }

    #[reducer]
    fn reprice(ctx: &ReducerContext, sku: String, discount: Discount) -> Result<(), String> {
        let items = ctx.db.item();
        let item = items
            .sku()
            .find(&sku)
            .ok_or_else(|| format!("no item `{sku}`"))?;
        let price = match discount {
            Discount::None => item.price,
            Discount::Percent(percent) => item.price - item.price * u32::from(percent) / 100,
            Discount::Fixed { amount } => item.price.saturating_sub(amount),
        };
        items.sku().update(Item { price, ..item });
        Ok(())
    }

    #[reducer]
    fn remove_cheap(ctx: &ReducerContext, below: u32) {
        let removed = ctx.db.item().price().delete(..below);
        wasmod::info!("removed {removed} items below {below}");
    }

    #[reducer]
    fn points(ctx: &ReducerContext, id: u64, x: u64, y: u32, z: u32) {
        ctx.db.point().insert(Point { id, x, y, z });
    }

    #[procedure]
    fn restock(ctx: &mut ProcedureContext, sku: String, count: u8) -> Result<u64, String> {
        let sender = ctx.sender();
        let mut first = 0;
        for n in 0..count {
            let sku = format!("{sku}-{n}");
            let id = ctx
                .try_with_tx(|tx| {
                    tx.db
                        .item()
                        .try_insert(Item {
                            id: 0,
                            sku,
                            price: 10,
                            aisle: 9,
                            shelf: n,
                            owner: sender,
                        })
                        .map(|item| item.id)
                })
                .map_err(|error| error.to_string())?
                .map_err(|error| error.to_string())?;
            if n == 0 {
                first = id;
            }
        }
        Ok(first)
    }

    #[view]
    fn mine(ctx: &ViewContext) -> Vec<Item> {
        ctx.db
            .item()
            .iter()
            .filter(|item| item.owner == ctx.sender())
            .collect()
    }

    #[view]
    fn on_shelf(ctx: &AnonymousViewContext, aisle: u8, shelf: u8) -> Vec<String> {
        ctx.db
            .item()
            .by_shelf()
            .filter((aisle, shelf))
            .map(|item| item.sku)
            .collect()
    }

    #[view]
    fn in_aisle(ctx: &AnonymousViewContext, aisle: u8) -> Vec<String> {
        ctx.db
            .item()
            .by_shelf()
            .filter((aisle,))
            .map(|item| item.sku)
            .collect()
    }

    #[view]
    fn priced(ctx: &AnonymousViewContext, low: u32, high: u32) -> Vec<u32> {
        ctx.db
            .item()
            .price()
            .filter(low..=high)
            .map(|item| item.price)
            .collect()
    }

    #[view]
    fn cheapest(ctx: &AnonymousViewContext) -> Option<Item> {
        ctx.db.item().price().filter(..).next()
    }

    #[http_handler(GET, "/count")]
    fn count(ctx: &mut HttpContext, _request: Request) -> Response {
        let count = ctx.with_tx(|tx| tx.db.item().count());
        Response::text(count.to_string())
    }

    /// An item's price by SKU, in cents or (`?in=euros`) in euros.
    #[http_handler(GET, "/items/{sku}/price")]
    fn price(ctx: &mut HttpContext, request: Request) -> Response {
        let Some(sku) = ctx.param("sku").map(str::to_owned) else {
            return Response::new(400);
        };
        match ctx.with_read_tx(|tx| tx.db.item().sku().find(&sku)) {
            Some(item) if request.query("in").as_deref() == Some("euros") => {
                Response::text(format!("{}.{:02}", item.price / 100, item.price % 100))
            }
            Some(item) => Response::text(item.price.to_string()),
            None => Response::new(404).with_body(sku),
        }
    }

    /// Takes precedence over `/items/{sku}/price` for its literal segment.
    #[http_handler(GET, "/items/cheapest/price")]
    fn cheapest_price(ctx: &mut HttpContext, _request: Request) -> Response {
        let cheapest = ctx.with_read_tx(|tx| tx.db.item().iter().map(|item| item.price).min());
        Response::text(cheapest.unwrap_or_default().to_string())
    }

    #[http_handler(POST, "/echo")]
    fn echo(_ctx: &mut HttpContext, request: Request) -> Result<Response, String> {
        if request.body.is_empty() {
            return Err("nothing to echo".into());
        }
        Ok(Response::new(200).with_body(request.body))
    }
}

use shop::{Discount, Item, ItemAccess, Point, PointAccess};

const ALICE: Identity = Identity::from_bytes([1; 32]);
const BOB: Identity = Identity::from_bytes([2; 32]);

fn committed(outcome: Outcome) {
    assert!(matches!(outcome, Outcome::Committed { .. }), "{outcome}");
}

fn stocked() -> TestModule<shop::Module> {
    let module = TestModule::<shop::Module>::new();
    committed(module.call_reducer(ALICE, "add", ("apple".to_string(), 30u32, 1u8, 1u8)));
    committed(module.call_reducer(ALICE, "add", ("pear".to_string(), 50u32, 1u8, 2u8)));
    committed(module.call_reducer(BOB, "add", ("plum".to_string(), 20u32, 2u8, 1u8)));
    committed(module.call_reducer(BOB, "add", ("fig".to_string(), 80u32, 1u8, 1u8)));
    module
}

#[test]
fn inserts_fill_auto_increment_and_enforce_uniqueness() {
    let module = stocked();
    let ids: Vec<u64> = module.read(|db| {
        let mut ids: Vec<u64> = db.item().iter().map(|item| item.id).collect();
        ids.sort();
        ids
    });
    assert_eq!(ids, [1, 2, 3, 4]);
    match module.call_reducer(ALICE, "add", ("apple".to_string(), 1u32, 0u8, 0u8)) {
        Outcome::Failed { message, .. } => {
            assert!(message.contains("same unique key"), "{message}")
        }
        other => panic!("a duplicate sku was accepted: {other}"),
    }
    assert_eq!(module.read(|db| db.item().count()), 4);
}

#[test]
fn err_and_panic_roll_everything_back() {
    let module = stocked();
    match module.call_reducer(ALICE, "add_then_fail", ("kiwi".to_string(),)) {
        Outcome::Failed { message, code } => {
            assert_eq!(message, "changed my mind");
            assert_eq!(code as u16, Errno::ENTRY_FAILED.code());
        }
        other => panic!("{other}"),
    }
    match module.call_reducer(ALICE, "add_then_panic", ("kiwi".to_string(),)) {
        Outcome::Aborted { reason } => assert!(reason.contains("the shelf collapsed"), "{reason}"),
        other => panic!("{other}"),
    }
    assert_eq!(module.read(|db| db.item().sku().find("kiwi")), None);
    assert_eq!(module.read(|db| db.item().count()), 4);
    committed(module.call_reducer(ALICE, "add", ("kiwi".to_string(), 5u32, 3u8, 3u8)));
}

#[test]
fn bad_arguments_are_an_error_naming_the_parameter() {
    let module = stocked();
    let outcome = module.call_reducer(ALICE, "add", ("melon".to_string(), 5u32));
    match outcome {
        Outcome::Failed { code, message } => {
            assert_eq!(code as u16, Errno::BAD_ARGUMENTS.code());
            assert_eq!(
                message,
                "reducer `add`: argument `aisle`: the input ended before the value did; \
                 `add` takes 4 arguments, as the tuple `(sku, price, aisle, shelf)`"
            );
        }
        other => panic!("{other}"),
    }
    match module.call_reducer(ALICE, "add", ("melon".to_string(), 5u32, 1u8, 1u8, 9u8)) {
        Outcome::Failed { message, .. } => assert_eq!(
            message,
            "reducer `add`: bytes were left after the last argument; \
             `add` takes 4 arguments, as the tuple `(sku, price, aisle, shelf)`"
        ),
        other => panic!("{other}"),
    }
    match module.call_reducer(ALICE, "reprice", ("apple".to_string(), 7u8)) {
        Outcome::Failed { message, .. } => assert_eq!(
            message,
            "reducer `reprice`: argument `discount`: a sum type's tag names no variant; \
             `reprice` takes 2 arguments, as the tuple `(sku, discount)`"
        ),
        other => panic!("{other}"),
    }
    match module.call_anonymous_view::<Vec<String>>("in_aisle", (1u8, 2u8)) {
        Err(CallFailure::Outcome(Outcome::Failed { message, .. })) => assert!(
            message.ends_with("`in_aisle` takes 1 argument, as the tuple `(aisle,)`"),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
    match module.call_procedure::<u64>(ALICE, "restock", ()) {
        Err(CallFailure::Outcome(Outcome::Failed { message, .. })) => assert!(
            message.ends_with("`restock` takes 2 arguments, as the tuple `(sku, count)`"),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unique_updates_and_user_enums() {
    let module = stocked();
    committed(module.call_reducer(
        ALICE,
        "reprice",
        ("apple".to_string(), Discount::Percent(10)),
    ));
    committed(module.call_reducer(
        ALICE,
        "reprice",
        ("pear".to_string(), Discount::Fixed { amount: 15 }),
    ));
    committed(module.call_reducer(ALICE, "reprice", ("fig".to_string(), Discount::None)));
    let prices = module.read(|db| {
        ["apple", "pear", "fig"].map(|sku| db.item().sku().find(sku).map(|item| item.price))
    });
    assert_eq!(prices, [Some(27), Some(35), Some(80)]);
    match module.call_reducer(ALICE, "reprice", ("nope".to_string(), Discount::None)) {
        Outcome::Failed { message, .. } => assert_eq!(message, "no item `nope`"),
        other => panic!("{other}"),
    }
}

#[test]
fn btree_scans_points_prefixes_and_ranges() {
    let module = stocked();
    let on_shelf: Vec<String> = module.call_anonymous_view("on_shelf", (1u8, 1u8)).unwrap();
    assert_eq!(sorted(on_shelf), ["apple", "fig"]);
    let in_aisle: Vec<String> = module.call_anonymous_view("in_aisle", (1u8,)).unwrap();
    assert_eq!(sorted(in_aisle), ["apple", "fig", "pear"]);
    let priced: Vec<u32> = module
        .call_anonymous_view("priced", (25u32, 50u32))
        .unwrap();
    assert_eq!(priced, [30, 50], "a range scan returns rows in index order");
    let cheapest: Option<Item> = module.call_anonymous_view("cheapest", ()).unwrap();
    assert_eq!(cheapest.map(|item| item.sku), Some("plum".to_string()));

    committed(module.call_reducer(ALICE, "remove_cheap", (40u32,)));
    let logs = module.logs();
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].level, LogLevel::Info);
    assert_eq!(logs[0].message, "removed 2 items below 40");
    assert_eq!(&*logs[0].target, "module::shop");
    assert!(
        logs[0].file.ends_with("module.rs") && logs[0].line > 0,
        "{:?}",
        logs[0]
    );
    assert_eq!(module.read(|db| db.item().count()), 2);
}

#[test]
fn per_caller_views_see_their_caller() {
    let module = stocked();
    let alices: Vec<Item> = module.call_view(ALICE, "mine", ()).unwrap();
    let bobs: Vec<Item> = module.call_view(BOB, "mine", ()).unwrap();
    assert_eq!(
        sorted(alices.into_iter().map(|item| item.sku).collect()),
        ["apple", "pear"]
    );
    assert_eq!(
        sorted(bobs.into_iter().map(|item| item.sku).collect()),
        ["fig", "plum"]
    );
}

#[test]
fn procedures_open_their_own_transactions() {
    let module = stocked();
    let first: Result<u64, String> = module
        .call_procedure(BOB, "restock", ("nut".to_string(), 3u8))
        .unwrap();
    assert_eq!(first, Ok(5));
    assert_eq!(
        module.read(|db| db.item().by_shelf().filter((9u8,)).count()),
        3
    );
    // A clash in the second transaction rolls back only that one.
    let again: Result<u64, String> = module
        .call_procedure(BOB, "restock", ("nut-x".to_string(), 1u8))
        .unwrap();
    assert!(again.is_ok());
    let clash: Result<u64, String> = module
        .call_procedure(BOB, "restock", ("nut".to_string(), 2u8))
        .unwrap();
    assert!(clash.unwrap_err().contains("same unique key"));
    assert_eq!(
        module.read(|db| db.item().by_shelf().filter((9u8,)).count()),
        4
    );
}

#[test]
fn http_handlers_answer_requests() {
    let module = stocked();
    let response = module
        .call_http(Request::new(Method::Get, "/count"))
        .unwrap();
    assert_eq!((response.status, response.body), (200, b"4".to_vec()));
    let mut echo = Request::new(Method::Post, "/echo");
    echo.body = b"hi".to_vec();
    assert_eq!(module.call_http(echo).unwrap().body, b"hi");
    match module.call_http(Request::new(Method::Post, "/echo")) {
        Err(CallFailure::Outcome(Outcome::Failed { message, .. })) => {
            assert_eq!(message, "nothing to echo")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn http_routes_capture_parameters_and_read_the_query() {
    let module = stocked();
    let get = |path: &str, query: &str| {
        let mut request = Request::new(Method::Get, path);
        request.query = query.to_owned();
        module.call_http(request)
    };
    let pear = get("/items/pear/price", "").unwrap();
    assert_eq!((pear.status, pear.body), (200, b"50".to_vec()));
    let euros = get("/items/fig/price", "in=euros&x=1").unwrap();
    assert_eq!(euros.body, b"0.80");
    let missing = get("/items/kiwi%20fruit/price", "").unwrap();
    assert_eq!(
        (missing.status, missing.body),
        (404, b"kiwi fruit".to_vec())
    );
    let cheapest = get("/items/cheapest/price", "").unwrap();
    assert_eq!(
        cheapest.body, b"20",
        "the literal route wins over `{{sku}}`"
    );
    match module.call_http(Request::new(Method::Delete, "/items/pear/price")) {
        Err(CallFailure::Outcome(Outcome::Failed { code, message })) => {
            assert_eq!(code as u16, Errno::NO_SUCH_ENTRY.code());
            assert_eq!(
                message,
                "no http handler answers DELETE /items/pear/price: it takes GET"
            );
        }
        other => panic!("{other:?}"),
    }
    for unrouted in ["/items/pear", "/items//price", "/items/pear/price/x"] {
        match get(unrouted, "") {
            Err(CallFailure::Outcome(Outcome::Failed { message, .. })) => {
                assert_eq!(message, format!("no http handler answers GET {unrouted}"))
            }
            other => panic!("{unrouted}: {other:?}"),
        }
    }
}

#[test]
fn plain_rows_and_plain_arguments_round_trip() {
    assert!(<Point as wasmod::Decode>::LAYOUT.is_plain());
    let module = TestModule::<shop::Module>::new();
    committed(module.call_reducer(ALICE, "points", (7u64, u64::MAX, 3u32, 4u32)));
    let point = module.read(|db| db.point().id().find(7u64));
    assert_eq!(
        point,
        Some(Point {
            id: 7,
            x: u64::MAX,
            y: 3,
            z: 4
        })
    );
    match module.call_reducer(ALICE, "points", (7u64, 1u64, 3u32)) {
        Outcome::Failed { message, .. } => assert_eq!(
            message,
            "reducer `points`: argument `(all)`: the input ended before the value did; \
             `points` takes 4 arguments, as the tuple `(id, x, y, z)`"
        ),
        other => panic!("{other}"),
    }
}

#[test]
fn tests_can_write_through_the_module_handles() {
    let module = TestModule::<shop::Module>::new();
    let inserted = module.write(|db| {
        db.point().insert(Point {
            id: 1,
            x: 2,
            y: 3,
            z: 4,
        })
    });
    assert_eq!(inserted.id, 1);
    assert_eq!(module.read(|db| db.point().count()), 1);
}

#[test]
fn the_description_lists_tables_and_indexes() {
    let module = TestModule::<shop::Module>::new();
    let def = module.description();
    let item = &def.tables[0];
    assert_eq!(item.name, "item");
    assert!(item.public);
    assert_eq!(item.primary_key, Some(0));
    assert_eq!(item.auto_inc, [0]);
    let indexes: Vec<(&str, &[u16], bool)> = item
        .indexes
        .iter()
        .map(|index| (index.name.as_str(), index.columns.as_slice(), index.unique))
        .collect();
    assert_eq!(
        indexes,
        [
            ("id", &[0][..], true),
            ("sku", &[1][..], true),
            ("price", &[2][..], false),
            ("by_shelf", &[3, 4][..], false)
        ]
    );
    assert!(!def.tables[1].public);
    let unknown = module.call_reducer(ALICE, "nope", ());
    assert!(matches!(unknown, Outcome::Failed { .. }), "{unknown}");
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}
