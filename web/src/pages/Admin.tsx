export function AdminPage() { return null; }
