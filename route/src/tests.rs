use super::*;

#[test]
fn parameters_capture_whole_segments_percent_decoded() {
    let pattern = Pattern::parse("/accounts/{name}/entries/{id}").expect("valid");
    assert_eq!(pattern.params().collect::<Vec<_>>(), ["name", "id"]);
    assert_eq!(
        pattern.captures("/accounts/ann%20lee/entries/7"),
        Some(vec![
            ("name".to_owned(), "ann lee".to_owned()),
            ("id".to_owned(), "7".to_owned())
        ])
    );
    assert!(pattern.matches("/accounts/ann/entries/7"));
    for other in [
        "/accounts/ann/entries",
        "/accounts//entries/7",
        "/accounts/ann/entries/7/more",
        "/accounts/ann/entries/7/",
        "/account/ann/entries/7",
        "accounts/ann/entries/7",
    ] {
        assert!(!pattern.matches(other), "{other}");
    }
    assert_eq!(pattern.captures("/accounts/%ff/entries/1"), None);
    let plain = Pattern::parse("/stats").expect("valid");
    assert_eq!(plain.captures("/stats"), Some(vec![]));
    assert!(!plain.matches("/stats/"));
    assert!(Pattern::parse("/").expect("valid").matches("/"));
}

#[test]
fn bad_patterns_are_refused_with_the_reason() {
    let refused = |text| Pattern::parse(text).unwrap_err();
    assert_eq!(refused("stats"), PatternError::NoLeadingSlash);
    assert_eq!(
        refused("/accounts/{name"),
        PatternError::UnbalancedBraces("{name".into())
    );
    assert_eq!(
        refused("/accounts/name}"),
        PatternError::UnbalancedBraces("name}".into())
    );
    assert_eq!(
        refused("/a/x{name}"),
        PatternError::PartialSegment("x{name}".into())
    );
    assert_eq!(
        refused("/a/{x}{y}"),
        PatternError::PartialSegment("{x}{y}".into())
    );
    assert_eq!(refused("/a/{}"), PatternError::BadName(String::new()));
    assert_eq!(refused("/a/{1x}"), PatternError::BadName("1x".into()));
    assert_eq!(
        refused("/a/{x}/b/{x}"),
        PatternError::DuplicateParam("x".into())
    );
    assert_eq!(
        refused("/a/{x").to_string(),
        "unbalanced braces in `{x`: a parameter is written `{name}`"
    );
}

#[test]
fn literal_segments_outrank_parameters_and_same_routes_are_found() {
    let literal = Pattern::parse("/accounts/new").expect("valid");
    let param = Pattern::parse("/accounts/{name}").expect("valid");
    assert!(literal.outranks(&param));
    assert!(!param.outranks(&literal));
    assert!(!param.outranks(&param));
    let other_name = Pattern::parse("/accounts/{who}").expect("valid");
    assert!(param.same_routes(&other_name));
    assert!(!param.same_routes(&literal));
    assert!(!param.same_routes(&Pattern::parse("/accounts/{name}/x").expect("valid")));
}

#[test]
fn query_values_are_read_as_forms_send_them() {
    let query = "limit=10&name=ann+lee&flag&x%20y=%C3%A9&limit=20";
    assert_eq!(query_value(query, "limit").as_deref(), Some("10"));
    assert_eq!(query_value(query, "name").as_deref(), Some("ann lee"));
    assert_eq!(query_value(query, "flag").as_deref(), Some(""));
    assert_eq!(query_value(query, "x y").as_deref(), Some("é"));
    assert_eq!(query_value(query, "missing"), None);
    assert_eq!(query_value("", "a"), None);
    assert_eq!(query_value("a=%zz", "a"), None);
    assert_eq!(percent_decode("a+b%2F").as_deref(), Some("a+b/"));
}
