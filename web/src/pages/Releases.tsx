export function ReleasesPage() { return null; }
export function ReleasePage() { return null; }
