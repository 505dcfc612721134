export function DatasetsPage() { return null; }
