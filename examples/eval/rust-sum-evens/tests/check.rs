#[path = "lib.rs"]
mod lib;

fn main() {
    assert_eq!(lib::sum_evens(&[1, 2, 3, 4]), 6);
    assert_eq!(lib::sum_evens(&[]), 0);
    assert_eq!(lib::sum_evens(&[-2, 5, 7]), -2);
    println!("ok");
}
