import { useEffect, useState } from 'react';
import { serverNow } from './clock';

/** The server's now, re-read every `everyMs` while the component is mounted: for text that counts. */
export function useNow(everyMs = 1_000): number {
  const [now, setNow] = useState(serverNow);
  useEffect(() => {
    const timer = setInterval(() => setNow(serverNow()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}
