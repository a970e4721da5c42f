import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { countLines } from "../src/edit/text.js";
import { classifyHead, decodeUtf8, sniffImage } from "../src/fs/sniff.js";
import { formatLines } from "../src/tools/read.js";

describe("sniffImage", () => {
  test("recognizes png, jpeg, gif and webp by magic number only", () => {
    assert.equal(sniffImage(Buffer.from("89504e470d0a1a0a0000", "hex")), "image/png");
    assert.equal(sniffImage(Buffer.from("ffd8ffe000104a464946", "hex")), "image/jpeg");
    assert.equal(sniffImage(Buffer.from("GIF89a\x01\x00", "latin1")), "image/gif");
    assert.equal(sniffImage(Buffer.from("RIFF\x24\x00\x00\x00WEBPVP8 ", "latin1")), "image/webp");
    assert.equal(sniffImage(Buffer.from("RIFF\x24\x00\x00\x00WAVEfmt ", "latin1")), undefined);
    assert.equal(sniffImage(Buffer.from("<svg xmlns=...>")), undefined);
  });
});

describe("classifyHead", () => {
  test("text, empty, binary and other encodings", () => {
    assert.equal(classifyHead(Buffer.alloc(0)), "empty");
    assert.equal(classifyHead(Buffer.from("hello\n\tworld\r\n")), "text");
    assert.equal(classifyHead(Buffer.from("a\0b")), "binary");
    assert.equal(classifyHead(Buffer.from([1, 2, 3, 4, 5, 6, 0x41])), "binary");
    assert.equal(classifyHead(Buffer.from("caf\xe9 cr\xe8me", "latin1")), "not-utf8");
  });

  test("a multibyte character cut at the end of the probe is not binary", () => {
    const bytes = Buffer.from("abc€");
    assert.equal(classifyHead(bytes.subarray(0, bytes.length - 1)), "text");
    const emoji = Buffer.from("ok 🦜");
    for (const cut of [1, 2, 3]) assert.equal(classifyHead(emoji.subarray(0, emoji.length - cut)), "text");
    assert.equal(classifyHead(emoji), "text");
  });

  test("an invalid sequence at the end is not mistaken for a cut one", () => {
    // A lone continuation byte, and a lead byte followed by a non-continuation.
    assert.equal(classifyHead(Buffer.from("abc\x80", "latin1")), "not-utf8");
    assert.equal(classifyHead(Buffer.from("abc\xe2(", "latin1")), "not-utf8");
  });
});

describe("decodeUtf8", () => {
  test("reports the line of the first invalid byte", () => {
    assert.deepEqual(decodeUtf8(Buffer.from("ok\nok\nbad \xff\n", "latin1")), { ok: false, line: 3 });
    assert.deepEqual(decodeUtf8(Buffer.from("fine ✓")), { ok: true, text: "fine ✓" });
  });

  test("drops a byte order mark, and only that", () => {
    assert.deepEqual(decodeUtf8(Buffer.from("\ufeffhello")), { ok: true, text: "hello" });
    assert.deepEqual(decodeUtf8(Buffer.from("hello\ufeff")), { ok: true, text: "hello\ufeff" });
  });
});

describe("formatLines", () => {
  test("pads numbers to the widest shown line and ignores the final newline", () => {
    const text = `${Array.from({ length: 12 }, (_, i) => `l${i + 1}`).join("\n")}\n`;
    assert.equal(
      formatLines(text, 8, 3),
      "8\tl8\n9\tl9\n10\tl10\n\n[File truncated: showing lines 8-10 of 12 total. Use offset=11 to continue, or offset and limit parameters to read other sections.]",
    );
    assert.equal(formatLines("only\n", 1, 2000), "1\tonly");
    assert.equal(formatLines("a\n\nb", 0, 2000), "1\ta\n2\t\n3\tb");
  });
});

describe("countLines", () => {
  test("counts lines as an editor does", () => {
    assert.equal(countLines(""), 0);
    assert.equal(countLines("a"), 1);
    assert.equal(countLines("a\n"), 1);
    assert.equal(countLines("a\nb"), 2);
    assert.equal(countLines("\n\n"), 2);
  });
});
