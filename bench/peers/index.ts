import type { Peer, PeerSpec } from './peer';

/** Loads only the peer asked for, so a process never carries another system's code or state. */
export async function openPeer(spec: PeerSpec): Promise<Peer> {
  switch (spec.kind) {
    case 'ours':
      return (await import('./ours')).openOurs(spec);
    case 'dbos':
      return (await import('./dbos')).openDbos(spec);
    case 'floor':
      return (await import('./floor')).openFloor(spec);
    case 'ceiling':
      return (await import('./ceiling')).openCeiling(spec);
  }
}
