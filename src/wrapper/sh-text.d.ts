// Lets TypeScript import shell scripts as text (`import text from "./wrapper.sh" with { type: "text" }`).
declare module "*.sh" {
  const text: string;
  export default text;
}
