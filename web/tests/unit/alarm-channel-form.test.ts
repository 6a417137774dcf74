import { describe, expect, it } from 'vitest'
import { channelForm, createBody, emptyChannelForm, missingFields, updateBody } from '@/pages/alarms/channel-form'

describe('alarm channel form', () => {
  it('starts as a webhook with nothing chosen', () => {
    expect(emptyChannelForm()).toEqual({ name: '', kind: 'webhook', target: '', secret: '', rotateSecret: false, groups: [], jobs: [] })
  })

  it('shows a channel without its secret, and copies its lists', () => {
    const c = { id: 3, name: 'ops', kind: 'email' as const, target: 'a@example.com', secretSet: false, groups: [1], jobs: [7, 9] }
    const form = channelForm(c)
    expect(form).toEqual({ name: 'ops', kind: 'email', target: 'a@example.com', secret: '', rotateSecret: false, groups: [1], jobs: [7, 9] })
    form.jobs.push(11)
    expect(c.jobs).toEqual([7, 9])
  })

  it('names the required fields left empty', () => {
    expect(missingFields({ ...emptyChannelForm(), name: '  ' })).toEqual(['name', 'target'])
    expect(missingFields({ ...emptyChannelForm(), name: 'x', target: 'https://h.example/' })).toEqual([])
  })

  it('creates a webhook with the trimmed fields, and its secret only when one is typed', () => {
    const form = { ...emptyChannelForm(), name: ' hooks ', target: ' https://h.example/x ', groups: [2], jobs: [5] }
    expect(createBody(form)).toEqual({ name: 'hooks', kind: 'webhook', target: 'https://h.example/x', groups: [2], jobs: [5] })
    expect(createBody({ ...form, secret: 'a-secret-of-16-chars' })).toMatchObject({ secret: 'a-secret-of-16-chars' })
    // Rotating means nothing for a channel not made yet.
    expect(createBody({ ...form, rotateSecret: true })).not.toHaveProperty('rotateSecret')
  })

  it('never sends a secret for an e-mail channel', () => {
    const form = { ...emptyChannelForm(), kind: 'email' as const, name: 'm', target: 'a@example.com', secret: 'left-over-secret-x', rotateSecret: true }
    expect(createBody(form)).not.toHaveProperty('secret')
    const body = updateBody(form)
    expect(body).not.toHaveProperty('secret')
    expect(body).not.toHaveProperty('rotateSecret')
  })

  it('changes a webhook keeping, replacing or rotating its secret', () => {
    const form = { ...emptyChannelForm(), name: 'hooks', target: 'https://h.example/x' }
    expect(updateBody(form)).toEqual({ name: 'hooks', kind: 'webhook', target: 'https://h.example/x', groups: [], jobs: [] })
    expect(updateBody({ ...form, rotateSecret: true })).toMatchObject({ rotateSecret: true })
    const typed = updateBody({ ...form, secret: 'a-secret-of-16-chars', rotateSecret: true })
    expect(typed).toMatchObject({ secret: 'a-secret-of-16-chars' })
    expect(typed).not.toHaveProperty('rotateSecret')
  })
})
