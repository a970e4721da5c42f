const assert = require("node:assert/strict");
const path = require("node:path");
const { fizzbuzz } = require(path.resolve("fizzbuzz.js"));
assert.deepEqual(fizzbuzz(15), [
  "1",
  "2",
  "Fizz",
  "4",
  "Buzz",
  "Fizz",
  "7",
  "8",
  "Fizz",
  "Buzz",
  "11",
  "Fizz",
  "13",
  "14",
  "FizzBuzz",
]);
assert.deepEqual(fizzbuzz(0), []);
console.log("ok");
