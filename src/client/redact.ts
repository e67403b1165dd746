// Keeps an API key out of any message that might be shown or stored.

export function redact(text: string, secret: string | null | undefined): string {
  return secret ? text.split(secret).join("[redacted]") : text;
}
