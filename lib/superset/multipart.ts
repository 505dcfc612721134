import { randomBytes } from 'node:crypto';

export type MultipartPart = { name: string; value: string } | { name: string; filename: string; contentType: string; data: Buffer };

/** multipart/form-data body for Superset's import endpoints. */
export function encodeMultipart(parts: MultipartPart[]): { body: Buffer; contentType: string } {
  const boundary = `----switchyard${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  const quote = (s: string) => s.replace(/["\r\n\\]/g, '_');
  for (const p of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if ('data' in p) {
      chunks.push(
        Buffer.from(
          `Content-Disposition: form-data; name="${quote(p.name)}"; filename="${quote(p.filename)}"\r\nContent-Type: ${p.contentType}\r\n\r\n`,
        ),
      );
      chunks.push(p.data);
    } else {
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${quote(p.name)}"\r\n\r\n`));
      chunks.push(Buffer.from(p.value, 'utf8'));
    }
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
