// The worker bundles this module: export every workflow type, and nothing that does I/O.
export { selfcheckWorkflow } from './selfcheck.ts';
export { migrationWorkflow } from './migration.ts';
export { backupWorkflow, restoreWorkflow } from './backup.ts';
export { gitDeployWorkflow } from './git-deploy.ts';
export { gitCompanionsWorkflow } from './git-companions.ts';
export { gitPreviewWorkflow } from './git-preview.ts';
export { mapColumnsWorkflow } from './map-columns.ts';
export { llmDocsWorkflow } from './llm-docs.ts';
export { releaseWorkflow, releasePublishWorkflow, releaseCheckWorkflow } from './release.ts';
export { datasetLaunchWorkflow } from './dataset-launch.ts';
export { datasetChangeWorkflow } from './dataset-change.ts';
export { assistantConfirmationWorkflow } from './assistant-confirmation.ts';
export { scheduledRunWorkflow, driftReportWorkflow } from './schedules.ts';
export { validateWorkflow } from './validate.ts';
