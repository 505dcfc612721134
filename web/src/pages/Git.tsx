export function GitPage() { return null; }
