// Memories and a memory's page share the list of memories (memory.tsx imports it from memories.tsx): loaded
// through this one module they are one chunk, so that opening either fetches a single file.
export { Memories } from './pages/memories.tsx';
export { MemoryPage } from './pages/memory.tsx';
