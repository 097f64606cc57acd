// The tests' SMTP server is shared with @x/notify's tests.
export { type SmtpReceiver, startSmtpReceiver, unquote } from '@internal/pg-test';
