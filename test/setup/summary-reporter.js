/**
 * Prints the suite's closing line in the plain form CI reads in any language:
 * "N passed, N failed" (", N skipped" when some were).
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const failed = results.numFailedTests + (results.numRuntimeErrorTestSuites > 0 ? results.numRuntimeErrorTestSuites : 0);
    process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}
module.exports = SummaryReporter;
