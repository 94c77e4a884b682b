use super::parse_interval;

#[test]
fn intervals_need_a_unit_and_a_number() {
    assert_eq!(parse_interval("5s").expect("5s"), 5.0);
    assert!((parse_interval("400ms").expect("400ms") - 0.4).abs() < 1e-12);
    assert!(parse_interval("5").is_err());
    assert!(parse_interval("fast").is_err());
    assert!(parse_interval("xs").is_err());
}
