pub fn sum_evens(values: &[i64]) -> i64 {
    todo!()
}
