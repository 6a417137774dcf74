// The alarm channel dialog's form, and the body it sends: POST alarm-channels for a new channel,
// PUT alarm-channels/{id} for a change. A secret goes only with a webhook: the one typed in, or
// (a change) a request for a generated one; left empty, a new webhook gets a generated secret
// and a changed one keeps its own.
import type { AlarmChannel, AlarmChannelInput, AlarmChannelKind, AlarmChannelUpdate } from '@/api/types'

export interface ChannelForm {
  name: string
  kind: AlarmChannelKind
  target: string
  /** A secret of the operator's own choice (webhooks); empty: keep or generate one. */
  secret: string
  /** Replace the webhook's secret with a generated one (a change only). */
  rotateSecret: boolean
  groups: number[]
  jobs: number[]
}

export function emptyChannelForm(): ChannelForm {
  return { name: '', kind: 'webhook', target: '', secret: '', rotateSecret: false, groups: [], jobs: [] }
}

/** The form showing an existing channel (its secret is never read back). */
export function channelForm(c: AlarmChannel): ChannelForm {
  return {
    name: c.name ?? '',
    kind: c.kind ?? 'webhook',
    target: c.target ?? '',
    secret: '',
    rotateSecret: false,
    groups: [...(c.groups ?? [])],
    jobs: [...(c.jobs ?? [])],
  }
}

/** The fields a save cannot go without, that are empty. */
export function missingFields(form: ChannelForm): ('name' | 'target')[] {
  const missing: ('name' | 'target')[] = []
  if (!form.name.trim()) missing.push('name')
  if (!form.target.trim()) missing.push('target')
  return missing
}

function secretPart(form: ChannelForm, update: boolean): Pick<AlarmChannelInput, 'secret' | 'rotateSecret'> {
  if (form.kind !== 'webhook') return {}
  if (form.secret) return { secret: form.secret }
  if (update && form.rotateSecret) return { rotateSecret: true }
  return {}
}

/** The body of POST alarm-channels. */
export function createBody(form: ChannelForm): AlarmChannelInput {
  return {
    name: form.name.trim(),
    kind: form.kind,
    target: form.target.trim(),
    ...secretPart(form, false),
    groups: [...form.groups],
    jobs: [...form.jobs],
  }
}

/** The body of PUT alarm-channels/{id}: every field the form shows, so the channel is as shown. */
export function updateBody(form: ChannelForm): AlarmChannelUpdate {
  return { ...createBody(form), ...secretPart(form, true) }
}
