// GET /storage/audio/<key>?expires=…&sig=…: the signed audio URLs the audio operation hands out (audio.ts).
// Outside /external/v1 and outside the contract: 403 JSON after expiry or on a bad signature.
import type http from 'node:http';
import type { AudioSigner } from './audio.ts';
import type { Ctx } from './context.ts';
import type { Repo } from './repo.ts';
import { sendJson } from './send.ts';

export async function serveStorage(s: { signer: AudioSigner; repo: Repo }, method: string, path: string, rawQuery: string, sw: Pick<Ctx, 'rule' | 'faults'>, res: http.ServerResponse): Promise<void> {
  if (method !== 'GET') return sendJson(res, 405, { error: 'method_not_allowed', message: 'GET only' }, { allow: 'GET' });
  const verdict = s.signer.verify(path, rawQuery, sw.rule('storageClock', Date.now)());
  if ('refused' in verdict) return sendJson(res, 403, { error: 'audio_url_refused', message: verdict.refused === 'expired' ? 'the audio URL has expired' : 'the audio URL signature is not valid' });
  if (sw.faults.has('audio_storage_unavailable')) return sendJson(res, 503, { error: 'audio_storage_unavailable', message: 'audio storage is temporarily unavailable' });
  const object = await s.repo.getAudioObject(verdict.storageKey);
  if (!object) return sendJson(res, 404, { error: 'audio_not_found', message: 'audio object not found' });
  res.writeHead(200, { 'content-type': object.content_type, 'content-length': object.bytes.length, 'cache-control': 'no-store' });
  res.end(object.bytes);
}
