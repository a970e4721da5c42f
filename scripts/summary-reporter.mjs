// node:test reporter that counts leaf tests and writes {passed, failed, skipped, todo, skipReasons, fileMs} as JSON to
// its destination. Used by run-tests.mjs so the run can end with the plain "N passed, N failed, N skipped" line CI
// reads, after the slowest test files (fileMs: the summed duration of each file's top-level tests).
export default async function* summaryReporter(source) {
  const counts = { passed: 0, failed: 0, skipped: 0, todo: 0, skipReasons: [], fileMs: {} };
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { data } = event;
    if (data.nesting === 0 && data.file) {
      counts.fileMs[data.file] = (counts.fileMs[data.file] ?? 0) + (data.details?.duration_ms ?? 0);
    }
    if (data.details?.type === "suite") continue; // count tests, not describe() blocks
    if (data.skip !== undefined && data.skip !== false) {
      counts.skipped++;
      counts.skipReasons.push(`${data.name}: ${data.skip === true ? "(no reason given)" : data.skip}`);
    } else if (data.todo !== undefined && data.todo !== false) counts.todo++;
    else if (event.type === "test:pass") counts.passed++;
    else counts.failed++;
  }
  yield `${JSON.stringify(counts)}\n`;
}
