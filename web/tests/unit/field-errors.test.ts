import { describe, expect, it, vi } from 'vitest'
import { ApiError } from '@/api/errors'
import { useFieldErrors } from '@/utils/errors'

// What is not a field's error is shown as a message (ElMessage, imported on demand with its style).
const message = vi.hoisted(() => vi.fn())
vi.mock('element-plus/es', () => ({ ElMessage: message }))
vi.mock('element-plus/es/components/base/style/css', () => ({}))
vi.mock('element-plus/es/components/message/style/css', () => ({}))

describe('useFieldErrors', () => {
  it('puts a 400 naming a field of the form under that field', () => {
    const { fieldErrors, apply, clear } = useFieldErrors(['name', 'target'] as const)
    expect(apply(new ApiError(400, 'invalid', 'target: not an http(s) URL', 'target'))).toBe(true)
    expect(fieldErrors).toEqual({ target: 'target: not an http(s) URL' })
    clear()
    expect(fieldErrors).toEqual({})
  })

  it('shows a 409 as a message unless the form takes it under its field', () => {
    message.mockClear()
    const plain = useFieldErrors(['name'] as const)
    expect(plain.apply(new ApiError(409, 'conflict', 'the name is taken', 'name'))).toBe(false)
    expect(plain.fieldErrors).toEqual({})
    expect(message).toHaveBeenCalledWith(expect.objectContaining({ type: 'error', message: 'the name is taken' }))

    const conflicts = useFieldErrors(['name', 'groups'] as const, [400, 409])
    expect(conflicts.apply(new ApiError(409, 'conflict', 'group 9 does not exist', 'groups'))).toBe(true)
    expect(conflicts.fieldErrors).toEqual({ groups: 'group 9 does not exist' })
    // A field the form does not have is still a message.
    expect(conflicts.apply(new ApiError(409, 'conflict', 'something else', 'kind'))).toBe(false)
  })
})
