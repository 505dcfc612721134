export function DatasetReviewPage() { return null; }
