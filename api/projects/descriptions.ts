// The OpenAPI document's longer prose for the routes of api/projects/, kept out of the route definitions.

export const deleteProjectsId =
  'Answers as soon as the project is deleted: its memories leave every read at once and are erased in the ' +
  'background by the `project-erase-<id>` workflow, with one `memory.deleted` event each.';
