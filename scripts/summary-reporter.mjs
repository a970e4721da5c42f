// node:test reporter that counts leaf tests and writes {passed, failed, skipped, todo} as JSON to its destination.
// Used by run-tests.mjs so the run can end with the plain "N passed, N failed, N skipped" line CI reads.
export default async function* summaryReporter(source) {
  const counts = { passed: 0, failed: 0, skipped: 0, todo: 0, skipReasons: [] };
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { data } = event;
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
