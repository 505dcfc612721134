/** Compares two releases by major and minor ("6.0.1" and "6.0" are the same release line). */
export function compareRelease(a: string, b: string): number {
  const [am = 0, an = 0] = a.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const [bm = 0, bn = 0] = b.split('.').map((n) => Number.parseInt(n, 10) || 0);
  return am !== bm ? am - bm : an - bn;
}
